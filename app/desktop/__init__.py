"""The window as a desktop citizen: the tray, closing to it and notifications (`citizen`,
`notifications`), a second start summoning the first (`summon`, `single_instance`) and
the global shortcut through the desktop portal (`shortcut_portal`)."""
