"""The same memory on every device: each device writes what changed on it as encrypted
files into a folder the person already syncs (Syncthing, Nextcloud, a share), and applies
the other devices' files, column by column, the later write by a hybrid logical clock
winning. Nothing here opens the folder's files one by one as a database: the live file
never travels."""
