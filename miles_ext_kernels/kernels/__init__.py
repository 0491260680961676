"""First-party Cake-format kernel packages (each a directory with a build.json)."""
