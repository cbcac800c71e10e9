"""The fuzzers of CoordinationForce and of the PLUMED reader (fuzz_coordination.py) in CI: seeded, about 15 s each, on the
Reference platform. Every case must end with a result that is finite and sane or with a clear
exception: zero crashes, hangs, silent non-finite results (or bad inputs accepted) and unexpected
exception types. A longer run, by hand:

    python python/tests/fuzz_coordination.py --seconds 1200 --seed 7
"""

import pytest

import fuzz_coordination
from fuzz_coordination import FAILURES, Report

SEED = 25
SECONDS = 15


@pytest.mark.parametrize('kind', ['xml', 'api', 'plumed'])
def test_fuzzer_finds_nothing(kind):
    report = fuzz_coordination.fuzz([kind], seconds=SECONDS, seed=SEED)
    print(report.summary())
    assert report.cases >= 200, report.summary()
    # the cases get as far as an evaluation often enough to test it (a mutated PLUMED input less often)
    assert report.counts['ok'] >= report.cases // (10 if kind == 'plumed' else 5), report.summary()
    assert {k: report.counts[k] for k in FAILURES} == dict.fromkeys(FAILURES, 0), report.summary()


def test_crashes_and_hangs_are_caught_and_named():
    report = Report(0)
    cases = [('api', 0, 0), ('abort', 0, 1), ('api', 0, 2), ('sleep', 0, 3), ('api', 0, 4)]
    fuzz_coordination.run_cases(cases, report, caseTimeout=4)
    assert [failure[:2] for failure in report.failures] == [('crash', 'abort:0:1'), ('hang', 'sleep:0:3')]
    assert report.counts['crash'] == 1 and report.counts['hang'] == 1
    assert report.counts['ok'] + report.counts['refused'] == 3 and report.cases == 5
