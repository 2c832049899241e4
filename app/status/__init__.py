"""The status bar and the parts it shows: counts, model, sync, meaning, backups
(`status_bar`, `status_parts`, `status_row`), and the notice at the first start
(`start_notice`)."""
