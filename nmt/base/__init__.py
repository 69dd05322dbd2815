"""Below every other layer: errors, file readers, where files live, devices, timing."""
