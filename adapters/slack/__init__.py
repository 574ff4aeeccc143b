"""The Slack adapter: translates Slack events into bot Turns and Replies into Slack messages."""
