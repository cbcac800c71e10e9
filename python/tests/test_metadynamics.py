"""GPU-resident Metadynamics against openmm.app.metadynamics.Metadynamics over CustomCVForce: the
same hills on the same seed, the same free-energy profile within statistical error, and the exact
profile of a toy model."""

import os

import numpy as np
import pytest

import openmm
import openmm.app.metadynamics as peer
from openmm import unit

from openmmcoordination import CoordinationForce
from openmmcoordination.metadynamics import BiasVariable, Metadynamics

from gr_helpers import (TOY_PARTNERS, run_toy_metadynamics, toy_cv, toy_exact_free_energy, toy_system)


# OpenMM 8.2's Reference platform keeps a cached Gaussian random number across a reseed (fixed in
# 8.3), so two runs with one seed differ after any earlier simulation in the process.
@pytest.mark.skipif(tuple(int(v) for v in openmm.__version__.split('.')[:2]) < (8, 3),
                    reason='OpenMM < 8.3 does not reproduce a seeded run within one process')
def test_same_seed_same_hills():
    """Same seed, short run: both deposit the same hills at the same CVs (until chaos separates the
    trajectories, which takes far longer than this)."""
    ours, simulation = run_toy_metadynamics(Metadynamics, seed=11, steps=3000, frequency=20)
    theirs, theirSimulation = run_toy_metadynamics(peer.Metadynamics, seed=11, steps=3000, frequency=20)
    assert len(ours.getHillHeights()) == 150
    np.testing.assert_allclose(ours.getFreeEnergy()._value, theirs.getFreeEnergy()._value, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours._totalBias, theirs._totalBias, rtol=1e-7, atol=1e-9)
    assert ours.getCollectiveVariables(simulation)[0] == pytest.approx(
        theirs.getCollectiveVariables(theirSimulation)[0], rel=1e-5)
    # well tempered: heights fall below the initial height as the bias grows
    heights = ours.getHillHeights().value_in_unit(unit.kilojoules_per_mole)
    assert heights[0] <= 1.0 and heights.min() < 0.9
    assert len(ours.getHillCenters()) == 150


def _aligned(free_energies, exact, mask):
    """Shift each profile to the exact one over the mask (free energies are defined up to a constant)."""
    free_energies = np.array(free_energies)
    return free_energies - (free_energies[:, mask] - exact[mask]).mean(axis=1)[:, None]


def test_free_energy_agrees_with_peer_and_exact_profile():
    """Independent seeds for each method; the mean profiles agree within their statistical error,
    and both match the exact profile of the toy model."""
    seeds, steps = [1, 2, 3, 4], 150000
    ours = [run_toy_metadynamics(Metadynamics, s, steps)[0].getFreeEnergy()._value for s in seeds]
    theirs = [run_toy_metadynamics(peer.Metadynamics, s + 100, steps)[0].getFreeEnergy()._value for s in seeds]
    grid = np.linspace(0.0, float(TOY_PARTNERS), 101)
    exact = toy_exact_free_energy(grid)
    mask = np.isfinite(exact) & (exact - np.min(exact[np.isfinite(exact)]) < 12.0)
    ours, theirs = _aligned(ours, exact, mask), _aligned(theirs, exact, mask)
    difference = ours.mean(axis=0) - theirs.mean(axis=0)
    error = np.sqrt(ours.var(axis=0, ddof=1)/len(seeds) + theirs.var(axis=0, ddof=1)/len(seeds))
    z = difference[mask]/np.maximum(error[mask], 0.05)
    assert np.sqrt(np.mean(z**2)) < 2.5, z
    assert np.max(np.abs(difference[mask])) < 2.0
    for profiles in (ours, theirs):
        rms = np.sqrt(np.mean((profiles.mean(axis=0)[mask] - exact[mask])**2))
        assert rms < 1.5


def test_bias_is_the_force_table():
    """The bias force is the CoordinationForce itself, with the table 'bias' of the current grid, in
    its own force group; its energy is the spline of the grid at the CV."""
    meta, simulation = run_toy_metadynamics(Metadynamics, seed=5, steps=2000, frequency=50)
    force = meta.force
    assert isinstance(force, CoordinationForce)
    assert force.getEnergyExpression() == 'bias(cv)' and force.getTabulatedFunctionName(0) == 'bias'
    assert force.getForceGroup() == 31
    assert not any(isinstance(f, openmm.CustomCVForce) for f in simulation.system.getForces())
    values, low, high = force.getTabulatedFunction(0).getFunctionParameters()
    np.testing.assert_allclose(values, meta.getBias()._value)
    cv = meta.getCollectiveVariables(simulation)[0]
    energy = simulation.context.getState(getEnergy=True, groups={31}).getPotentialEnergy()._value
    grid = meta.getCollectiveVariableGrid()
    assert energy == pytest.approx(np.interp(cv, grid, values), abs=0.05*max(values))
    np.testing.assert_allclose(meta.getFreeEnergy()._value, -(5.0/4.0)*np.array(values))


def test_walkers_share_a_directory(tmp_path):
    first, _ = run_toy_metadynamics(Metadynamics, 1, 2000, frequency=50, biasDir=str(tmp_path), saveFrequency=500)
    files = [name for name in os.listdir(tmp_path) if name.startswith('bias_')]
    assert len(files) == 1
    second, _ = run_toy_metadynamics(Metadynamics, 2, 2000, frequency=50, biasDir=str(tmp_path), saveFrequency=500)
    np.testing.assert_allclose(second.getBias()._value, second._selfBias + first._selfBias, rtol=1e-12)
    # and openmm.app's walkers read our files
    third, _ = run_toy_metadynamics(peer.Metadynamics, 3, 500, frequency=50, biasDir=str(tmp_path), saveFrequency=500)
    np.testing.assert_allclose(third._totalBias, third._selfBias + first._selfBias + second._selfBias, rtol=1e-12)


def test_errors():
    system, _ = toy_system()
    variable = BiasVariable(toy_cv(), 0.0, 2.0, 0.1)
    with pytest.raises(ValueError, match='exactly one'):
        Metadynamics(system, [variable, variable], 300, 5.0, 1.0, 100)
    with pytest.raises(ValueError, match='CoordinationForce'):
        Metadynamics(system, [BiasVariable(openmm.CustomBondForce('r'), 0, 1, 0.1)], 300, 5.0, 1.0, 100)
    with pytest.raises(ValueError, match='biasFactor'):
        Metadynamics(system, [variable], 300, 1.0, 1.0, 100)
    with pytest.raises(ValueError, match='saveFrequency'):
        Metadynamics(system, [variable], 300, 5.0, 1.0, 100, saveFrequency=150, biasDir='.')
    with pytest.raises(ValueError, match='both'):
        Metadynamics(system, [variable], 300, 5.0, 1.0, 100, saveFrequency=100)
    restrained = toy_cv()
    restrained.setEnergyExpression('cv^2')
    with pytest.raises(ValueError, match='energy expression'):
        Metadynamics(system, [BiasVariable(restrained, 0.0, 2.0, 0.1)], 300, 5.0, 1.0, 100)
    with pytest.raises(ValueError, match='periodic'):
        Metadynamics(system, [BiasVariable(toy_cv(), 0.0, 2.0, 0.1, periodic=True)], 300, 5.0, 1.0, 100)
    assert system.getNumForces() == 1  # nothing was added by the failed attempts
