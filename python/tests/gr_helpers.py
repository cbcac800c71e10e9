"""Shared helpers of the tests of the user's side (g(r), reporters, analysis, metadynamics, plots)."""

import importlib
import os
import struct
import sys

import numpy as np

import openmm
import openmm.app as app
from openmm import unit

from openmmcoordination import CoordinationForce

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def import_script(folder, name):
    """A script of the repository (benchmarks/benchmark.py, examples/ion_pairing.py) as a module."""
    path = os.path.join(REPO, folder)
    sys.path.insert(0, path)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(path)


def gas_system(num_particles, box):
    """Non-interacting particles of unit mass in a periodic box (3x3 array, rows a, b, c, in nm)."""
    system = openmm.System()
    for _ in range(num_particles):
        system.addParticle(1.0)
    system.setDefaultPeriodicBoxVectors(*[openmm.Vec3(*row) for row in np.asarray(box, dtype=float)])
    return system


def uniform_positions(rng, num_particles, box):
    """Positions uniform in the cell spanned by the box vectors (an ideal gas)."""
    return rng.random((num_particles, 3)) @ np.asarray(box, dtype=float)


def lj_fluid(num_particles=64, box_edge=1.6, seed=1):
    """A small periodic Lennard-Jones fluid (argon-like), its Topology and starting positions."""
    rng = np.random.default_rng(seed)
    system = openmm.System()
    box = np.eye(3)*box_edge
    system.setDefaultPeriodicBoxVectors(*[openmm.Vec3(*row) for row in box])
    nonbonded = openmm.NonbondedForce()
    nonbonded.setNonbondedMethod(openmm.NonbondedForce.CutoffPeriodic)
    nonbonded.setCutoffDistance(0.7)
    for _ in range(num_particles):
        system.addParticle(39.9)
        nonbonded.addParticle(0.0, 0.34, 0.99)
    system.addForce(nonbonded)
    topology = app.Topology()
    chain = topology.addChain()
    for i in range(num_particles):
        topology.addAtom('AR', app.element.argon, topology.addResidue('AR', chain))
    topology.setPeriodicBoxVectors(box*unit.nanometer)
    # a lattice, so no two atoms start on top of each other
    side = int(np.ceil(num_particles**(1/3)))
    grid = np.array([(i, j, k) for i in range(side) for j in range(side) for k in range(side)][:num_particles], dtype=float)
    positions = (grid + 0.5)*box_edge/side + rng.normal(0, 0.01, (num_particles, 3))
    return system, topology, positions


def png_size(path):
    """(width, height) of a PNG file, checking its signature."""
    with open(path, 'rb') as f:
        header = f.read(24)
    assert header[:8] == b'\x89PNG\r\n\x1a\n', '%s is not a PNG file' % path
    return struct.unpack('>II', header[16:24])


# A toy model for metadynamics with an exact free-energy profile: a centre particle bound to
# K partners by identical double-well radial potentials, partners not interacting. The CV (the
# coordination number of the centre with its partners) is a sum of K independent s(r_i), so its
# distribution is the K-fold convolution of that of one s(r), p1(r) ~ r^2 exp(-U(r)/kT).

TOY_PARTNERS = 2
TOY_TEMPERATURE = 300.0
TOY_A, TOY_RC, TOY_W = 10.0, 0.35, 0.1   # kJ/mol, nm, nm: wells at rc - w and rc + w, a barrier A at rc
TOY_POTENTIAL = 'A*((r-rc)^2-w^2)^2/w^4; A=%g; rc=%g; w=%g' % (TOY_A, TOY_RC, TOY_W)


def toy_potential(r):
    """TOY_POTENTIAL in NumPy."""
    return TOY_A*((r - TOY_RC)**2 - TOY_W**2)**2/TOY_W**4


def toy_system(partners=TOY_PARTNERS):
    """The centre (particle 0) bound to ``partners`` particles by TOY_POTENTIAL, and its Topology."""
    system = openmm.System()
    for _ in range(partners + 1):
        system.addParticle(10.0)
    bonds = openmm.CustomBondForce(TOY_POTENTIAL)
    for i in range(1, partners + 1):
        bonds.addBond(0, i, [])
    system.addForce(bonds)
    topology = app.Topology()
    residue = topology.addResidue('TOY', topology.addChain())
    for i in range(partners + 1):
        topology.addAtom('C%d' % i, app.element.carbon, residue)
    return system, topology


def toy_cv():
    return CoordinationForce([0], list(range(1, TOY_PARTNERS + 1)))


def toy_positions():
    positions = np.zeros((TOY_PARTNERS + 1, 3))
    positions[1:, 0] = 0.25
    positions[2:, 1] = 0.1
    return positions


def toy_exact_free_energy(grid):
    """The exact F(cv) in kJ/mol on an evenly spaced grid starting at 0 (inf where p = 0)."""
    kT = unit.MOLAR_GAS_CONSTANT_R.value_in_unit(unit.kilojoule_per_mole/unit.kelvin)*TOY_TEMPERATURE
    force = toy_cv()
    r = np.linspace(1e-4, 1.5, 300001)
    weight = r**2*np.exp(-toy_potential(r)/kT)
    coarse = r[::10]
    s = np.interp(r, coarse, [force.evaluateSwitchingFunction(float(x))[0] for x in coarse])
    h = grid[1] - grid[0]
    edges = np.concatenate([[grid[0] - h/2], grid + h/2])
    single, _ = np.histogram(s, bins=edges, weights=weight)
    p = single.copy()
    for _ in range(TOY_PARTNERS - 1):
        p = np.convolve(p, single)[:len(grid)]
    p = p/p.sum()/h
    with np.errstate(divide='ignore'):
        return -kT*np.log(p)


def toy_pair_cv(partner):
    """The coordination of the toy's centre with one partner, s(r_0k) (CV k of the multi-CV toy)."""
    return CoordinationForce([0], [partner])


def toy_separable_positions(dimensions):
    """The centre at the origin, partner k at 0.25 nm on axis k-1 (so r_0k sets CV k alone)."""
    positions = np.zeros((dimensions + 1, 3))
    for k in range(dimensions):
        positions[k + 1, k] = 0.25
    return positions


def run_toy_metadynamics(cls, seed, steps, frequency=100, gridWidth=101, biasDir=None, saveFrequency=None, **options):
    """Well-tempered metadynamics on the toy model with ``cls`` (ours or openmm.app's), Reference platform;
    ``options``: more keyword arguments of ``cls`` (recordFrequency)."""
    from openmm.app.metadynamics import BiasVariable
    system, topology = toy_system()
    variable = BiasVariable(toy_cv(), 0.0, float(TOY_PARTNERS), 0.1, gridWidth=gridWidth)
    meta = cls(system, [variable], TOY_TEMPERATURE*unit.kelvin, 5.0, 1.0*unit.kilojoules_per_mole, frequency,
               saveFrequency, biasDir, **options)
    integrator = openmm.LangevinMiddleIntegrator(TOY_TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(seed)
    simulation = app.Simulation(topology, system, integrator, openmm.Platform.getPlatformByName('Reference'))
    simulation.context.setPositions(toy_positions())
    simulation.context.setVelocitiesToTemperature(TOY_TEMPERATURE, seed)
    meta.step(simulation, steps)
    return meta, simulation


def run_toy_metadynamics_nd(cls, seed, steps, dimensions, frequency=20, gridWidth=41, biasWidth=0.1, biasDir=None,
                            saveFrequency=None, config=None, **options):
    """Well-tempered metadynamics with ``cls`` (ours or openmm.app's) on ``dimensions`` CVs of the toy:
    CV k is s(r_0k), the coordination of the centre with partner k alone (grid [0, 1]); the CVs are
    independent, each with the double well of TOY_POTENTIAL. gridWidth: one for all variables or
    one per variable; config: a helpers.PlatformConfig (default: the Reference platform); ``options``: more
    keyword arguments of ``cls`` (recordFrequency)."""
    from openmm.app.metadynamics import BiasVariable
    system, topology = toy_system(dimensions)
    widths = list(gridWidth) if isinstance(gridWidth, (list, tuple)) else [gridWidth]*dimensions
    variables = [BiasVariable(toy_pair_cv(k + 1), 0.0, 1.0, biasWidth, gridWidth=widths[k]) for k in range(dimensions)]
    meta = cls(system, variables, TOY_TEMPERATURE*unit.kelvin, 5.0, 1.0*unit.kilojoules_per_mole, frequency,
               saveFrequency, biasDir, **options)
    integrator = openmm.LangevinMiddleIntegrator(TOY_TEMPERATURE, 5.0, 0.002)
    integrator.setRandomNumberSeed(seed)
    platform = openmm.Platform.getPlatformByName('Reference') if config is None else config.platform()
    simulation = app.Simulation(topology, system, integrator, platform, {} if config is None else dict(config.properties))
    simulation.context.setPositions(toy_separable_positions(dimensions))
    simulation.context.setVelocitiesToTemperature(TOY_TEMPERATURE, seed)
    meta.step(simulation, steps)
    return meta, simulation


def hills_on_grid(centers, heights, axes, widths):
    """The sum of the Gaussians on the grid in NumPy, axis 0 the last variable (openmm.app's layout),
    built from a meshgrid rather than from outer products as the class does."""
    centers = np.asarray(centers, dtype=float).reshape(len(heights), len(axes))
    mesh = np.meshgrid(*axes[::-1], indexing='ij')          # mesh[m] holds the values of variable d-1-m
    d = len(axes)
    bias = np.zeros(mesh[0].shape)
    for center, height in zip(centers, heights):
        exponent = sum(((mesh[d - 1 - k] - center[k])/widths[k])**2 for k in range(d))
        bias += height*np.exp(-0.5*exponent)
    return bias


def hills_of(meta):
    """(centers (hills, d), heights in kJ/mol) of a Metadynamics of ours."""
    heights = meta.getHillHeights().value_in_unit(unit.kilojoules_per_mole)
    return np.asarray(meta.getHillCenters()).reshape(len(heights), len(meta.variables)), heights
