"""Run files from strangers: reading one never changes it or anything beside it, cannot hang or
exhaust memory, and every failure is a `RunFileError` naming the bad part; names read from a file
are printed with control characters escaped."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from causal.errors import RunFileError
from causal.schema.run import SCHEMA_VERSION, Event, Window
from causal.schema.run_file import RunWriter, load_run

_JOURNAL_MAGIC = bytes([0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7])


def _run_file(path: Path, layer: str = "net.0") -> Path:
    w = RunWriter(path, {"model_class": "Toy"})
    for step in range(50):
        w.add_step(step, {"loss": 1.0 / (step + 1)})
    w.add_events([Event(3, layer, "grad", "grad_healthy", "grad_exploding", 1e4)],
                 window=Window(3, (2, 3), (layer,), ("grad_norm",), (((1.0,),), ((1e4,),))))
    w.close(status="finished")
    return path


def _digest(*paths: Path) -> list[str]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]


def _hot_journal(path: Path) -> Path:
    """Leave a hot rollback journal beside `path`: a writer killed inside a transaction."""
    code = ("import sqlite3, os, sys\n"
            "db = sqlite3.connect(sys.argv[1]); db.execute('BEGIN')\n"
            "db.execute('DELETE FROM steps'); db.execute('DELETE FROM meta')\n"
            "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True)
    journal = path.with_name(path.name + "-journal")
    assert journal.stat().st_size > 0
    return journal


def test_a_killed_writers_journal_is_rolled_back_in_a_private_copy(tmp_path: Path) -> None:
    path = _run_file(tmp_path / "run.ndbg")
    journal = _hot_journal(path)
    before = _digest(path, journal)
    run = load_run(path)
    assert run.meta["model_class"] == "Toy" and len(run.series) == 50  # the committed state
    assert _digest(path, journal) == before  # neither file touched


def test_the_super_journal_attack_deletes_nothing(tmp_path: Path) -> None:
    path = _run_file(tmp_path / "run.ndbg")
    journal = _hot_journal(path)
    victim = tmp_path / "elsewhere" / "precious.txt"
    victim.parent.mkdir()
    victim.write_text("precious\n")
    name = str(victim).encode()
    with open(journal, "ab") as f:  # the super-journal record SQLite reads at a journal's end
        f.write(struct.pack(">I", (1 << 30) // 4096 + 1) + name + struct.pack(">I", len(name))
                + struct.pack(">I", sum(name)) + _JOURNAL_MAGIC)
    before = _digest(path, journal)
    run = load_run(path)
    assert len(run.series) == 50
    assert victim.read_text() == "precious\n"
    assert _digest(path, journal) == before


def _altered(path: Path, *statements: str) -> Path:
    db = sqlite3.connect(path)
    for sql in statements:
        db.execute(sql)
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize("statement, needle", [
    ("CREATE VIEW hang AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
     "SELECT x FROM c", "view 'hang'"),
    ("CREATE TRIGGER t AFTER INSERT ON steps BEGIN DELETE FROM meta; END", "trigger 't'"),
    ("CREATE TABLE extra (x)", "table 'extra'"),
    ("CREATE INDEX by_step ON steps (step)", "index 'by_step'"),
    ("ALTER TABLE events ADD COLUMN surprise", "events table's columns"),
])
def test_objects_the_writer_never_creates_are_refused(tmp_path: Path, statement: str,
                                                       needle: str) -> None:
    path = _altered(_run_file(tmp_path / "run.ndbg"), statement)
    with pytest.raises(RunFileError, match=needle):
        load_run(path)


def test_a_recursive_view_in_place_of_a_table_cannot_hang_a_reader(tmp_path: Path) -> None:
    path = _altered(_run_file(tmp_path / "run.ndbg"), "DROP TABLE settings",
                    "CREATE VIEW settings AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
                    "SELECT x + 1 FROM c) SELECT x AS seq, x AS step, 'k' AS key, "
                    "zeroblob(1000000) AS value FROM c")
    start = time.monotonic()
    with pytest.raises(RunFileError, match="view 'settings'"):
        load_run(path)
    assert time.monotonic() - start < 5


def test_a_decompression_bomb_is_refused_before_it_is_allocated(tmp_path: Path) -> None:
    path = _run_file(tmp_path / "run.ndbg")
    header = json.dumps({"end_step": 0, "steps": list(range(4096)), "layers": ["a"] * 4096,
                         "stats": ["grad_norm"]}).encode()
    bomb = zlib.compress(len(header).to_bytes(4, "little") + header + bytes(8 * 4096 * 4096), 9)
    assert len(bomb) < 1 << 20
    db = sqlite3.connect(path)
    db.execute("UPDATE windows SET data = ?", (bomb,))
    db.commit()
    db.close()
    with pytest.raises(RunFileError, match=r"windows table.*decompressed"):
        load_run(path)


@pytest.mark.parametrize("version", [0, -1, 1.5, True, "1", None])
def test_schema_versions_no_writer_made_are_refused(tmp_path: Path, version: object) -> None:
    path = _altered(_run_file(tmp_path / "run.ndbg"),
                    f"UPDATE meta SET value = '{json.dumps(version)}' "
                    "WHERE key = 'schema_version'")
    with pytest.raises(RunFileError, match=f"this release reads v{SCHEMA_VERSION}"):
        load_run(path)


@pytest.mark.parametrize("statement", [
    "UPDATE events SET step = 'three'",
    "UPDATE events SET step = 2.5",
    "UPDATE events SET layer_name = X'00ff'",
    "UPDATE events SET metadata = '[1, 2]'",
    "UPDATE events SET kind = 'no-such-kind'",
    "UPDATE steps SET loss = X'0102'",
    "UPDATE steps SET step = 'x'",
    "UPDATE settings SET value = X'00'",
    "INSERT OR REPLACE INTO meta VALUES ('dag', '\"a string\"')",
    "INSERT OR REPLACE INTO meta VALUES ('dag', '{\"nodes\": [{\"name\": 1}]}')",
    f"UPDATE meta SET value = '{'[' * 100000}' WHERE key = 'model_class'",
])
def test_wrong_types_and_values_are_run_file_errors(tmp_path: Path, statement: str) -> None:
    path = _run_file(tmp_path / "run.ndbg")
    db = sqlite3.connect(path)
    db.execute("INSERT INTO settings (step, key, value) VALUES (0, 'lr/0', '0.1')")
    db.commit()
    db.close()
    with pytest.raises(RunFileError, match="cannot be read"):
        load_run(_altered(path, statement))


def test_names_with_control_characters_are_escaped(tmp_path: Path) -> None:
    evil = "net.0\x1b[2J\nstep 0 . Healthy: fake line\u202e"
    path = _run_file(tmp_path / "run.ndbg", layer=evil)
    _altered(path, "UPDATE meta SET value = '\"Toy\\u001b[31m\\nEvil\"' "
                   "WHERE key = 'model_class'")
    run = load_run(path)
    names = [run.events[0].layer_name, run.meta["model_class"], *run.windows[0].layers]
    assert all(name.isprintable() for name in names), names
    assert run.events[0].layer_name == "net.0\\x1b[2J\\nstep 0 . Healthy: fake line\\u202e"


def test_a_json_export_or_no_path_says_what_to_do(tmp_path: Path) -> None:
    run = load_run(_run_file(tmp_path / "run.ndbg"))
    export = tmp_path / "run.json"
    export.write_text(run.to_json())
    with pytest.raises(RunFileError, match=r"Run\.from_json"):
        load_run(export)
    for bad in (None, 5):
        with pytest.raises(RunFileError, match="needs the path of a run file"):
            load_run(bad)  # type: ignore[arg-type]


def test_reading_opens_nothing_for_writing(tmp_path: Path) -> None:
    path = _run_file(tmp_path / "run.ndbg")
    os.chmod(path, 0o444)
    os.chmod(tmp_path, 0o555)
    try:
        assert len(load_run(path).series) == 50
        assert sorted(p.name for p in tmp_path.iterdir()) == ["run.ndbg"]
    finally:
        os.chmod(tmp_path, 0o755)


def test_a_json_export_from_a_stranger_is_checked_too(tmp_path: Path) -> None:
    from causal.schema.run import Run

    run = load_run(_run_file(tmp_path / "run.ndbg", layer="net.0\x1b[2J"))
    back = Run.from_json(run.to_json())
    assert back.events[0].layer_name.isprintable()
    for text in ("[1]", "{oops", '{"events": [{"step": "x"}]}', "[" * 100000):
        with pytest.raises(RunFileError, match=r"not a run exported by Run\.to_json"):
            Run.from_json(text)
