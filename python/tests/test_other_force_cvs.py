"""Metadynamics on variables computed by other OpenMM Forces (a CustomTorsionForce) beside coordination
numbers (issue 40, item 5), the slower CustomCVForce path: periodic torsions (periodic=True, -pi to
pi), alone and beside a coordination number, against openmm.app.metadynamics.Metadynamics on the same
seed (where every variable is periodic, the only mix openmm.app takes), against NumPy (the hills
wrapped around the period, the table against SciPy's periodic spline, c(t)) and finite differences;
states and walkers of another mix of variables refused naming both; hills too narrow for the grid.

The comparisons with openmm.app take `host_config` (Reference and CPU: a seeded run is reproducible
in double precision there); the others run on the Reference platform.
"""

import copy
import math
import warnings

import numpy as np
import pytest

import openmm
import openmm.app.metadynamics as peer
from openmm import app, unit

from openmmcoordination import CoordinationForce, CVFunction, DistanceCV
from openmmcoordination.metadynamics import BiasVariable, Metadynamics
from openmmcoordination.opes import OPES

from conftest import available_configs
from helpers import finite_difference_forces

PARTICLES = 7
TEMPERATURE = 300.0
PI = math.pi


def pytest_generate_tests(metafunc):
    """Parametrize `host_config` over the available Reference and CPU configurations."""
    if 'host_config' in metafunc.fixturenames:
        configs = [c for c in available_configs()[0] if c.name in ('Reference', 'CPU')]
        metafunc.parametrize('host_config', configs, ids=[c.id for c in configs])


same_seed = pytest.mark.skipif(tuple(int(v) for v in openmm.__version__.split('.')[:2]) < (8, 3),
                               reason='OpenMM < 8.3 does not reproduce a seeded run within one process')


def chain():
    """A chain of 7 particles (bonds and angles, no torsion potential: its torsions turn freely) and its Topology."""
    system = openmm.System()
    topology = app.Topology()
    residue = topology.addResidue('CHN', topology.addChain())
    for i in range(PARTICLES):
        system.addParticle(12.0)
        topology.addAtom('C%d' % i, app.element.carbon, residue)
    bonds, angles = openmm.HarmonicBondForce(), openmm.HarmonicAngleForce()
    for i in range(PARTICLES - 1):
        bonds.addBond(i, i + 1, 0.15, 2000.0)
    for i in range(PARTICLES - 2):
        angles.addAngle(i, i + 1, i + 2, 1.9, 100.0)
    bonds.addBond(0, 4, 0.3, 200.0)
    system.addForce(bonds)
    system.addForce(angles)
    return system, topology


def chain_positions():
    p = np.array([[0, 0, 0], [0.15, 0, 0], [0.2, 0.14, 0], [0.35, 0.15, 0.05], [0.3, 0.25, 0.12], [0.2, 0.3, 0.2],
                  [0.1, 0.35, 0.3]])
    return p + np.random.default_rng(3).normal(0, 0.01, p.shape)


def torsion(first=0):
    force = openmm.CustomTorsionForce('theta')
    force.addTorsion(first, first + 1, first + 2, first + 3, [])
    return force


def coordination():
    force = CoordinationForce([0], [3, 4, 5])
    force.setR0(0.3)
    return force


def run(cls, variables, steps, config=None, seed=7, **options):
    system, topology = chain()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)            # the slower path's warning
        meta = cls(system, variables, TEMPERATURE*unit.kelvin, 5.0, 1.5*unit.kilojoules_per_mole, 20, **options)
    integrator = openmm.LangevinMiddleIntegrator(TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(seed)
    platform = openmm.Platform.getPlatformByName('Reference') if config is None else config.platform()
    properties = {} if config is None else config.properties
    simulation = app.Simulation(topology, system, integrator, platform, properties)
    simulation.context.setPositions(chain_positions())
    simulation.context.setVelocitiesToTemperature(TEMPERATURE, seed)
    meta.step(simulation, steps)
    return meta, simulation


def bias_energy_and_forces(meta, simulation):
    state = simulation.context.getState(getEnergy=True, getForces=True, groups={meta._force.getForceGroup()})
    return (state.getPotentialEnergy().value_in_unit(unit.kilojoules_per_mole),
            state.getForces(asNumpy=True).value_in_unit(unit.kilojoules_per_mole/unit.nanometer))


def test_states_of_another_mix_name_both(tmp_path):
    """A state or walker directory of another mix of variables (a torsion where a coordination number is, a
    DistanceCV of other particles, a CVFunction of another torsion) is refused naming both definitions, not
    every attribute of the CoordinationForce as 'None' or 'variables[0]' alone."""
    def make(first, biasDir=None):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            return Metadynamics(chain()[0], [BiasVariable(first, 0.0, 3.0, 0.1), BiasVariable(torsion(), -PI, PI, 0.3)],
                                TEMPERATURE*unit.kelvin, 5.0, 1.0, 10, None if biasDir is None else 10, biasDir)
    cases = [(torsion(1), coordination(), r"variables\[0\]\.force: the state a CustomTorsionForce, this object a "
              r"CoordinationForce\)"),
             (DistanceCV(0, 3), DistanceCV(0, 4), r"variables\[0\]\.force: the state DistanceCV\(0, 3\), this object "
              r"DistanceCV\(0, 4\)\)"),
             (DistanceCV(0, 3), torsion(1), r"variables\[0\]\.force: the state DistanceCV\(0, 3\), this object a "
              r"CustomTorsionForce\)"),
             (CVFunction('2*t', {'t': torsion(1)}), torsion(1), r"variables\[0\]\.force: the state CVFunction '2\*t' of "
              r"t: a CustomTorsionForce, this object a CustomTorsionForce\)"),
             (CVFunction('2*t', {'t': torsion(1)}), CVFunction('2*t', {'t': torsion(2)}),
              r"variables\[0\]\.force: forces\['t'\]: its Torsions the state <Torsions><Torsion p1=\"1\" p2=\"2\" p3=\"3\" "
              r"p4=\"4\" /></Torsions>, this object <Torsions><Torsion p1=\"2\" p2=\"3\" p3=\"4\" p4=\"5\" /></Torsions>\)")]
    for saved, other, message in cases:
        with pytest.raises(ValueError, match=r'setState: the state is of another run than this object \(collectiveVariables: '
                           + message):
            make(other).setState(make(saved).getState())
    make(torsion(1), str(tmp_path))
    with pytest.raises(ValueError, match=r"other settings \(collectiveVariables: variables\[0\]\.force: the directory a "
                       r"CustomTorsionForce, this run a CoordinationForce\)"):
        make(coordination(), str(tmp_path))


def test_hills_narrower_than_the_grid_warn():
    """A grid spacing larger than half the biasWidth (PLUMED's METAD warns there too) is a RuntimeWarning
    naming the variable, both numbers and the gridWidth that resolves the hills: 10 hills of 1 kJ/mol and
    width 0.01 on a grid of spacing 0.1 left a bias of at most 0.08 kJ/mol, silently. At half the width, none."""
    def make(width, gridWidth):
        return Metadynamics(chain()[0], [BiasVariable(coordination(), 0.0, 3.0, width, False, gridWidth)],
                            TEMPERATURE*unit.kelvin, 5.0, 1.0, 10)
    with pytest.warns(RuntimeWarning, match=r"^Metadynamics: the grid spacing of variables\[0\], 0\.1, is larger than half "
                      r"its biasWidth 0\.01: .* give a gridWidth of at least 601, or a wider biasWidth$"):
        make(0.01, 31)
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        make(0.2, 31)
        make(0.01, 601)
