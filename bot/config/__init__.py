"""Settings read from the environment (NAVIBOT_*) and their mixins."""
