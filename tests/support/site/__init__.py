"""The local test website: ordinary pages and hostile ones, served on loopback."""
