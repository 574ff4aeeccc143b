"""What the bot tells its operators: turn events, metrics, logs, the per-turn line, /healthz."""
