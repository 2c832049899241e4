"""Starting the window: the Qt application and its look (`gui`), the display checks before
Qt loads (`display`) and the packaged build's smoke test (`smoke`)."""
