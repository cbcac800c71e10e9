"""Seeded fuzzers of CoordinationForce, run in subprocesses so that a crash is caught as a crash.

    python python/tests/fuzz_coordination.py --seconds 1200 --seed 7          # both fuzzers, 20 minutes
    python python/tests/fuzz_coordination.py --case xml:7:123 --show          # re-run one case here

The cases (fuzz_cases.py) are drawn from (kind, seed, index) alone. Cases run in batches, each
batch in a fresh worker process (`--worker`, reading the case list on stdin) with a time limit.
The worker announces each case before running it: when it crashes or runs out of time, the case
it was in is run again alone, with its own limit, to confirm and name the culprit, and the rest of
the batch goes on in a new worker. The report counts crashes, hangs, silent non-finite results (or
bad inputs accepted), unexpected exception types, and the cases that ran or were refused with a
clear error. python/tests/test_fuzz.py runs both fuzzers for a few seconds each in CI.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
MARK = '@@fuzz '
FAILURES = ('crash', 'hang', 'silent', 'unexpected')


@dataclass
class Report:
    """What the cases came to: counts by outcome and the failing cases with their details."""
    seed: int
    counts: dict = field(default_factory=lambda: {k: 0 for k in ('ok', 'refused') + FAILURES})
    failures: list = field(default_factory=list)
    seconds: float = 0.0

    def add(self, case, outcome, detail):
        self.counts[outcome] += 1
        if outcome in FAILURES:
            self.failures.append((outcome, '%s:%d:%d' % case, detail))

    @property
    def cases(self):
        return sum(self.counts.values())

    def summary(self):
        lines = ['seed %d: %d cases in %.0f s: %s' % (self.seed, self.cases, self.seconds,
                                                     ', '.join('%s %d' % item for item in self.counts.items()))]
        lines += ['  %s %s: %s' % failure for failure in self.failures[:20]]
        return '\n'.join(lines)


def _run_worker(cases, timeout, platform, special=()):
    """Run cases in one worker process: ({case: (outcome, detail)} of those that finished, the
    case running when it stopped or None, 'crash'/'hang'/None)."""
    command = [sys.executable, os.path.join(HERE, 'fuzz_coordination.py'), '--worker', '--platform', platform]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, cwd=HERE)
    try:
        output, _ = process.communicate(json.dumps([list(c) for c in cases]), timeout=timeout)
        stopped = None if process.returncode == 0 else 'crash'
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        stopped = 'hang'
    results, running = {}, None
    for line in (output or '').splitlines():
        if line.startswith(MARK):
            message = json.loads(line[len(MARK):])
            case = tuple(message['case'])
            if 'outcome' in message:
                results[case] = (message['outcome'], message['detail'])
                running = None
            else:
                running = case
    if stopped == 'crash':
        stopped = 'crash (exit status %d)' % process.returncode
    return results, running, stopped


def run_cases(cases, report, caseTimeout=20.0, platform='Reference'):
    """Run cases in a worker; when it crashes or hangs, run the case it was in alone to confirm
    and name the culprit, then go on with the rest of the batch in a new worker."""
    pending = [tuple(c) for c in cases]
    while pending:
        results, running, stopped = _run_worker(pending, caseTimeout + 0.5 * len(pending), platform)
        for case in pending:
            if case in results:
                report.add(case, *results[case])
        if stopped is None:
            for case in pending:
                if case not in results:
                    report.add(case, 'unexpected', 'the worker finished without running it')
            return
        if running is None:   # the worker died before its first case: nothing to blame a case for
            report.add(pending[0], stopped.split()[0], 'the worker %s before its first case' % stopped)
            return
        alone, _, how = _run_worker([running], caseTimeout, platform)
        if running not in alone:
            report.add(running, how.split()[0], how)
        else:   # fine alone: the batch's earlier cases led to it
            report.add(running, stopped.split()[0], '%s only after the cases before it in its batch, from %s:%d:%d'
                       % ((stopped,) + pending[0]))
        pending = pending[pending.index(running) + 1:]


def fuzz(kinds=('xml', 'api', 'plumed'), seconds=30.0, seed=0, batch=100, caseTimeout=20.0, platform='Reference', log=None):
    """Run batches of cases of each kind in turn until the time is up; return the Report."""
    report = Report(seed)
    start = time.time()
    index = 0
    while time.time() - start < seconds:
        for kind in kinds:
            run_cases([(kind, seed, index + k) for k in range(batch)], report, caseTimeout, platform)
        index += batch
        report.seconds = time.time() - start
        if log is not None:
            log(report.summary())
    report.seconds = time.time() - start
    return report


def worker(platform):
    """Run the cases listed on stdin, announcing each before it starts and its outcome after."""
    import resource
    if platform in ('Reference', 'CPU'):   # keep a runaway allocation from taking the machine's memory
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, resource.RLIM_INFINITY))
    import fuzz_cases
    for case in json.loads(sys.stdin.read()):
        print(MARK + json.dumps({'case': case}), flush=True)
        outcome, detail = fuzz_cases.run_case(*case, platformName=platform)
        print(MARK + json.dumps({'case': case, 'outcome': outcome, 'detail': detail}), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=60.0, help='how long to run (default 60)')
    parser.add_argument('--seed', type=int, default=0, help='the seed every case is drawn from (default 0)')
    parser.add_argument('--kinds', default='xml,api,plumed', help='which fuzzers, comma separated (default xml,api,plumed)')
    parser.add_argument('--batch', type=int, default=100, help='cases per worker process (default 100)')
    parser.add_argument('--timeout', type=float, default=20.0, help='seconds one case may take (default 20)')
    parser.add_argument('--platform', default='Reference')
    parser.add_argument('--case', help='run one case KIND:SEED:INDEX in this process and print its outcome')
    parser.add_argument('--show', action='store_true', help='with --case: print what the case does first')
    parser.add_argument('--worker', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, HERE)
    if args.worker:
        return worker(args.platform)
    if args.case:
        import fuzz_cases
        kind, seed, index = args.case.split(':')
        if args.show:
            print(fuzz_cases.describe_case(kind, int(seed), int(index)))
        print(*fuzz_cases.run_case(kind, int(seed), int(index), args.platform))
        return 0
    report = fuzz(args.kinds.split(','), args.seconds, args.seed, args.batch, args.timeout, args.platform,
                  log=lambda text: print(text.splitlines()[0], flush=True))
    print(report.summary())
    return 1 if any(report.counts[k] for k in FAILURES) else 0


if __name__ == '__main__':
    sys.exit(main())
