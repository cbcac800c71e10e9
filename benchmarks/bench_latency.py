"""The `latency` section of benchmark.py: a small CV inside a step."""

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


def run(platform, precision, quick):
    """Per-evaluation cost of a 1 x 1,000-pair CV inside an MD step (step time with it minus without)."""
    times = []
    for withForce in (False, True):
        context, integrator = latency_context(platform, precision, withForce)
        steps = 200 if quick else 5000
        integrator.step(steps // 10)

        def timed():
            context.getState(getEnergy=True)
            integrator.step(steps)
            context.getState(getEnergy=True)
        times.append(median_time(timed, 3) / steps)
        del context
    return [{'section': 'latency', 'case': '1 x 1,000 pairs with a restraint, per MD step',
             'us_per_evaluation': 1e6 * (times[1] - times[0]), 'us_step_without': 1e6 * times[0]}]


def section(platform, options):
    """The rows of the section for benchmark.py's options (precision, quick)."""
    return run(platform, options.precision, options.quick)
