"""`memstrata bench adversarial` runs end to end on tiny sizes and prints its figures."""

from __future__ import annotations

import re

import pytest

from memstrata_app.bench.adversarial import FAMILIES, ORDINARY
from memstrata_app.bench.cli import main


def test_adversarial_prints_per_kb_costs_and_the_other_clients_latency(capsys, local_embedder):
    assert main(["adversarial", "--samples", "1", "--min-kb", "2", "--max-kb", "2",
                 "--in-flight", "2", "--requests", "3", "--client-slots", "1"]) == 0
    out = capsys.readouterr().out
    number = r"\s+([\d.]+)"
    for family in (ORDINARY, *FAMILIES):
        m = re.search(rf"^{re.escape(family)}" + number * 6 + "$", out, re.M)
        assert m, family
        assert all(float(x) >= 0 for x in m.groups())
    assert re.search(rf"^ordinary chat text{number * 2}\s+1\.00", out, re.M)
    assert "1 memory steps per client at once" in out
    for label in ("alone", "under that load"):
        assert re.search(rf"^{label}{number}{number}$", out, re.M), label
    assert re.search(r"turns answered meanwhile: \d+ in [\d.]+ s", out)


def test_adversarial_refuses_bad_sizes(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["adversarial", "--min-kb", "9", "--max-kb", "3"])
    assert e.value.code == 2
    assert "min-kb" in capsys.readouterr().err
