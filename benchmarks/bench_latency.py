"""The `latency` section of benchmark.py: a small CV inside a step."""

import statistics

import openmm as mm

from common import make_context, median_time, random_positions, rational_cv


def latency_context(platform, precision, withForce):
    """The section's Context: 1,001 particles at random, a harmonic bond (so that the step is not
    empty), and with withForce the CV of particle 0 against the other 1,000, restrained; returns
    the Context and its integrator."""
    n = 1001
    positions, _ = random_positions(n)
    system = mm.System()
    for _ in range(n):
        system.addParticle(1.0)
    bonds = mm.HarmonicBondForce()
    bonds.addBond(1, 2, 0.3, 1.0)
    system.addForce(bonds)
    if withForce:
        force = rational_cv([0], list(range(1, n)))
        force.setEnergyExpression('0.5*k*(cv-1)^2')
        force.addGlobalParameter('k', 1.0)
        system.addForce(force)
    context, integrator = make_context(system, platform, precision, mm.VerletIntegrator(1e-6))
    context.setPositions(positions)
    return context, integrator


def run(platform, precision, quick, rounds=7):
    """Per-evaluation cost of a 1 x 1,000-pair CV inside an MD step: the step time with it less that
    without it, both Contexts timed in turn (the order reversed every other round), the median over
    the rounds of the difference. The step is host-bound here, so the host's noise is the error:
    the row gives the rounds' range too."""
    contexts = [latency_context(platform, precision, withForce) for withForce in (False, True)]
    steps = 200 if quick else 5000
    for context, integrator in contexts:
        integrator.step(steps // 10)

    def timed(context, integrator):
        def step():
            context.getState(getEnergy=True)
            integrator.step(steps)
            context.getState(getEnergy=True)
        return median_time(step, 1) / steps
    without, differences = [], []
    for r in range(3 if quick else rounds):
        order = (0, 1) if r % 2 == 0 else (1, 0)
        times = {i: timed(*contexts[i]) for i in order}
        without.append(times[0])
        differences.append(times[1] - times[0])
    return [{'section': 'latency', 'case': '1 x 1,000 pairs with a restraint, per MD step',
             'us_per_evaluation': 1e6 * statistics.median(differences), 'us_step_without': 1e6 * statistics.median(without),
             'us_per_evaluation_range': [1e6 * min(differences), 1e6 * max(differences)], 'rounds': len(differences)}]


def section(platform, options):
    """The rows of the section for benchmark.py's options (precision, quick)."""
    return run(platform, options.precision, options.quick)
