"""Local state is private: the SQLite database and its -wal/-shm files are 0600 whatever the
umask, and gunicorn opens no control socket shared by every gunicorn of the user."""

from __future__ import annotations

import os
import stat

from storage.db import Database, migrate


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_sqlite_files_are_created_0600(tmp_path):
    old = os.umask(0o022)  # the usual one: files 0644, world-readable
    try:
        path = tmp_path / "var" / "webdata.db"
        url = f"sqlite:///{path}"
        migrate(url)
        db = Database(url)  # switches the file to WAL: -wal and -shm appear
        db.check_writable()
        files = [path, path.with_name("webdata.db-wal"), path.with_name("webdata.db-shm")]
        assert all(file.exists() for file in files)
        assert {file.name: _mode(file) for file in files} == {file.name: 0o600 for file in files}
        db.dispose()
    finally:
        os.umask(old)


def test_a_world_readable_database_is_tightened(tmp_path):
    path = tmp_path / "old.db"
    migrate(f"sqlite:///{path}")
    path.chmod(0o644)
    Database(f"sqlite:///{path}").dispose()
    assert _mode(path) == 0o600

