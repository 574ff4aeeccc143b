"""The attack replay's own checks can fail (benchmarks/bench_attacks.py; the replay itself starts `navibot serve`
several times and never runs in the test suite): what it counts as a live link in a Teams message, and how a line
that was not run is reported."""

from __future__ import annotations

from benchmarks.bench_attacks import Report, live_markup


def test_a_teams_link_counts_as_live_only_where_teams_renders_markup() -> None:
    link = "[Reset password](https://evil.example/reset)"
    inert = {"type": "message", "summary": link, "attachments": [{"content": {"type": "AdaptiveCard", "body": [
        {"type": "RichTextBlock", "inlines": [{"type": "TextRun", "text": link}]},
        {"type": "ActionSet", "actions": [{"type": "Action.OpenUrl", "url": "https://benefits.example.gov/a"}]}]}}]}
    assert live_markup(inert) == []
    live = {"type": "message", "text": link, "attachments": [{"content": {"type": "AdaptiveCard", "body": [
        {"type": "TextBlock", "text": f"See {link}"},
        {"type": "FactSet", "facts": [{"title": "Source", "value": '<a href="https://evil.example">x</a>'}]},
        {"type": "ActionSet", "actions": [{"type": "Action.OpenUrl", "url": "javascript:alert(1)"}]}]}}],
        "entities": [{"citation": [{"appearance": {"url": "data:text/html,x"}}]}]}
    assert sorted(live_markup(live)) == sorted(["activity.text", "TextBlock.text", "FactSet",
                                                "Action.OpenUrl javascript:alert(1)", "url data:text/html,x"])


def test_an_attack_not_run_is_never_a_pass_and_a_failure_is_counted() -> None:
    report = Report(echo=False)
    report.add("slack", "non-numeric timestamp", "401", True)
    report.not_run("teams", "forged serviceUrl", "helpers missing")
    assert not report.failed and report.attacks[1].line().endswith("not run: helpers missing")
    report.add("slack", "deep JSON", "500", False)
    assert [a.name for a in report.failed] == ["deep JSON"]
    assert report.summary() == "3 attacks: 1 PASS, 1 FAIL, 1 not run"
