"""The CPU platform's own kernels (platforms/cpu): the plugin is loaded, and on systems large enough
for its cell lists and threads it agrees with the Reference platform to 1e-12 for every switching function
and every mode, for one, two and three threads (pair histograms: the same counts), and gives the same forces bit for bit from one
evaluation and one Context to the next for a given thread count. The other tests run on the CPU
platform through the `platform_config` fixture; these are about what only its kernels do.
"""

import os

import numpy as np
import pytest

import openmm

import openmmcoordination
from helpers import assert_close, energy_and_forces, make_system, random_positions, set_state
from openmmcoordination import CoordinationForce

TRICLINIC = np.array([[3.3, 0, 0], [0.8, 3.2, 0], [-0.7, 0.9, 3.4]])
SWITCHING = ('Rational', 'Exp', 'Gaussian', 'Smap', 'Cubic', 'Tanh', 'Cosinus', 'Custom', 'Q')


def test_cpu_plugin_is_loaded():
    """The CPU plugin is built beside the Reference one and loads (its kernels then replace the
    Reference ones on the CPU platform)."""
    from openmmcoordination import _config
    directories = list(_config.plugin_dirs) + [os.path.join(openmm.version.openmm_library_path, 'plugins')]
    found = [name for d in directories if os.path.isdir(d) for name in os.listdir(d) if name.startswith('libOpenMMCoordinationCPU')]
    assert found, 'no libOpenMMCoordinationCPU in %s' % directories
    assert not [f for f in openmmcoordination.plugin_load_failures if 'CoordinationCPU' in f]


def cpu_force(kind, mode, n):
    """A force of the switching type and mode over n particles, dmax 0.9 nm (infinite for Custom and
    Q, which then visit all pairs), periodic, energy 10*cv + 0.01*cv^2; in a pair list, weights
    and r0s of the pairs (weights alone for Cubic, which has no r0)."""
    everyone = list(range(n))
    if mode == 'one':
        force = CoordinationForce(everyone)
    elif mode == 'two':
        force = CoordinationForce(everyone[::3], everyone[:n//2])     # overlapping groups
    else:
        force = CoordinationForce(everyone[:n//2], everyone[n//2:], True)
    force.setSwitchingFunction(getattr(CoordinationForce, kind))
    if mode == 'pairs':
        force.setPairParameters(list(np.linspace(0.5, 1.5, n//2)), [] if kind == 'Cubic' else list(np.linspace(0.25, 0.35, n//2)))
    force.setR0(0.3)
    if kind == 'Custom':
        force.setCustomExpression('1/(1+x^4)')
    if kind != 'Q':
        force.setDMax(0.9 if kind != 'Custom' else float('inf'))
    force.setUsesPeriodicBoundaryConditions(True)
    force.setEnergyExpression('10*cv + 0.01*cv^2')
    return force


@pytest.mark.parametrize('mode', ['one', 'two', 'pairs'])
@pytest.mark.parametrize('kind', SWITCHING)
def test_cpu_against_reference(kind, mode):
    """Energies and forces against Reference to 1e-12 (both double precision) for 1, 2 and 3 threads,
    the same bits twice; pair histograms the same counts."""
    n = 600
    positions = random_positions(np.random.default_rng(43), n, TRICLINIC)
    system = make_system(n, TRICLINIC)
    force = cpu_force(kind, mode, n)
    system.addForce(force)
    reference = openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('Reference'))
    set_state(reference, positions, TRICLINIC)
    expected = energy_and_forces(reference)
    histograms = [force.getPairHistogram(reference, 50, rmax) for rmax in (1.2, 3.0)]    # over cells, and not
    assert abs(expected[0]) > 1.0
    for threads in ('1', '2', '3'):
        contexts = [openmm.Context(system, openmm.VerletIntegrator(0.001), openmm.Platform.getPlatformByName('CPU'),
                                   {'Threads': threads}) for _ in range(2)]
        results = []
        for context in contexts:
            set_state(context, positions, TRICLINIC)
            results += [energy_and_forces(context), energy_and_forces(context)]
        assert_close(results[0][0], expected[0], 1e-12, 'energy, %s threads' % threads)
        assert_close(results[0][1], expected[1], 1e-12, 'forces, %s threads' % threads)
        for other in results[1:]:
            assert other[0] == results[0][0] and np.array_equal(other[1], results[0][1]), '%s threads' % threads
        for rmax, counts in zip((1.2, 3.0), histograms):
            assert np.array_equal(force.getPairHistogram(contexts[0], 50, rmax), counts), (threads, rmax)
