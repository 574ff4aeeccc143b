"""Turn policy: chat commands, history, moods, access, feedback; one event per turn."""
