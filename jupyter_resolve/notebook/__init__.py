"""The user's notebook (DESIGN 9.2): its kernel's variables, snapshots, and proposed cells."""
