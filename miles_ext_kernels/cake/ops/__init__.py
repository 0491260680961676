"""Op facades: validation, layouts and dispatch over the backends."""
