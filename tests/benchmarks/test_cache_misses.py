"""benchmarks.cache_misses: the cache sizes it reads, the counts it parses and subtracts, what it says without
valgrind. (The valgrind runs themselves take minutes: their output is benchmarks/results/cpu-cache.txt.)"""

from __future__ import annotations

import pytest

from benchmarks import cache_misses as cm


def _index(folder, name, level, kind, size, ways, line=64):
    d = folder / name
    d.mkdir()
    for key, value in (("level", level), ("type", kind), ("size", size), ("ways_of_associativity", ways),
                       ("coherency_line_size", line)):
        (d / key).write_text(f"{value}\n")


def test_cache_geometry_reads_sysfs(tmp_path):
    _index(tmp_path, "index0", 1, "Data", "48K", 12)
    _index(tmp_path, "index1", 1, "Instruction", "32K", 8)
    _index(tmp_path, "index2", 2, "Unified", "2048K", 16)
    _index(tmp_path, "index3", 3, "Unified", "32M", 16)  # L3: not simulated
    assert cm.cache_geometry(tmp_path) == {"I1": (32768, 64, 8), "D1": (49152, 64, 12), "L2": (2097152, 64, 16)}


def test_cache_geometry_falls_back_for_what_sysfs_does_not_say(tmp_path):
    _index(tmp_path, "index0", 1, "Data", "64K", 4)
    (tmp_path / "index1").mkdir()  # unreadable: skipped
    geometry = cm.cache_geometry(tmp_path)
    assert geometry["D1"] == (65536, 64, 4)
    assert geometry["I1"] == (65536, 64, 4) and geometry["L2"] == (524288, 64, 8)


def test_summary_and_per_step_difference(tmp_path):
    short, long = tmp_path / "a.out", tmp_path / "b.out"
    short.write_text("desc: I1 cache: 65536 B\ncmd: x\nevents: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\n"
                     "fl=f\n1 2 3\nsummary: 1000 10 5 400 40 20 300 30 15\n")
    long.write_text("events: Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw\nsummary: 3000 50 25 800 140 60 500 70 35\n")
    a, b = cm.read_summary(short), cm.read_summary(long)
    assert a["Ir"] == 1000 and b["DLmw"] == 35
    step = cm.per_step(a, b, 100)
    assert step == {"Ir": 20.0, "I1mr": 0.4, "ILmr": 0.2, "Dr": 4.0, "D1mr": 1.0, "DLmr": 0.4, "Dw": 2.0,
                    "D1mw": 0.4, "DLmw": 0.2}
    broken = tmp_path / "c.out"
    broken.write_text("events: Ir\n")
    with pytest.raises(ValueError, match="no events or summary line"):
        cm.read_summary(broken)


def test_table_compares_with_raw():
    def counts(ir, il, dl, dw):
        return {"Ir": ir, "I1mr": 100, "ILmr": il, "Dr": 0, "D1mr": 200, "DLmr": dl, "Dw": 0, "D1mw": 50, "DLmw": dw}

    geometry = {"I1": (65536, 64, 4), "D1": (32768, 64, 8), "L2": (524288, 64, 8)}
    text = cm.table("tutorial", {"raw": counts(1000, 10, 100, 50), "autograd": counts(900, 40, 130, 60)}, geometry)
    lines = text.splitlines()
    assert "L1i 64 KiB, L1d 32 KiB, L2 512 KiB" in lines[0]
    assert lines[2].split() == ["raw", "1,000", "350", "10", "100", "50", "160"]
    assert lines[3].split() == ["autograd", "900", "350", "40", "130", "60", "230", "0.900,", "+70"]


def test_without_valgrind_it_says_so(monkeypatch, capsys):
    monkeypatch.setattr(cm.shutil, "which", lambda name: None)
    assert cm.main([]) == 2
    assert "valgrind is not installed" in capsys.readouterr().err


def test_bad_step_counts_are_refused(monkeypatch, capsys):
    monkeypatch.setattr(cm.shutil, "which", lambda name: "/usr/bin/valgrind")
    for steps in ("130,30", "ten,20"):
        with pytest.raises(SystemExit) as exited:
            cm.main(["--steps", steps])
        assert exited.value.code == 2
        assert "--steps" in capsys.readouterr().err


def test_bad_recipes_and_folders_are_refused(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(cm.shutil, "which", lambda name: "/usr/bin/valgrind")
    monkeypatch.setattr(cm, "measure", lambda *a: pytest.fail("measured despite bad input"))
    for recipes, words in (("raw,keras", "--recipes: keras; choose from raw, tensor, autograd"),
                           ("poly-nn", "--recipes: poly-nn;"), (",", "--recipes: none given")):
        with pytest.raises(SystemExit) as exited:
            cm.main(["--recipes", recipes])
        assert exited.value.code == 2
        assert words in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as exited:
        cm.main(["--keep", str(tmp_path / "file" / "sub")])
    assert exited.value.code == 2
    assert "--keep" in capsys.readouterr().err
