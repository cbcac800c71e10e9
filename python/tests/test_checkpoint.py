"""Checkpoints of Metadynamics and OPES (issue 41 item 2): N steps, saveCheckpoint, a new process
that creates the same objects, loadCheckpoint and N more steps, against 2N steps in one go in
another process: the same hills (or kernels), c(t), bias grid and positions to 1e-12 on the
Reference and CPU platforms (deterministic in double precision, the Langevin integrator's random
state in the Context's checkpoint). Also getState()/setState() directly, walkers keeping their id
and file index, and the states that setState() refuses.

Run as a script, this file is the process of one phase: ``python test_checkpoint.py KIND PLATFORM
PHASE STEPS FOLDER`` (PHASE full, first or second; results in FOLDER/PHASE.npz). OpenMM 8.2's CPU platform does not
restore the Langevin integrator's random state from a checkpoint: on it the CPU runs use a Verlet
integrator."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import openmm
import openmm.app as app
from openmm import unit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gr_helpers import TOY_TEMPERATURE, toy_pair_cv, toy_separable_positions, toy_system  # noqa: E402

from openmmcoordination import OPES, Metadynamics  # noqa: E402
from openmmcoordination.metadynamics import BiasVariable  # noqa: E402

#: kind -> (class, dimensions, options)
KINDS = {
    'metadynamics-1d': (Metadynamics, 1, {}),
    'metadynamics-2d': (Metadynamics, 2, dict(recordFrequency=10)),
    'opes-1d-adaptive': (OPES, 1, dict(adaptiveSigmaStride=60, recordFrequency=10)),
    'opes-2d-explore': (OPES, 2, dict(sigma=[0.06, 0.05], exploreMode=True)),
}
FREQUENCY = 20
OPENMM_VERSION = tuple(int(v) for v in openmm.__version__.split('.')[:2])
STEPS = 200


def build(kind, platform, biasDir=None, **changes):
    """The toy system (gr_helpers) with the sampler of ``kind``, a Simulation on ``platform``, seeded."""
    cls, dimensions, options = KINDS[kind]
    options = dict(options, **changes)
    system, topology = toy_system(dimensions)
    variables = [BiasVariable(toy_pair_cv(k + 1), 0.0, 1.0, 0.1, gridWidth=101) for k in range(dimensions)]
    walkers = dict(saveFrequency=2*FREQUENCY, biasDir=biasDir) if biasDir is not None else {}
    if cls is Metadynamics:
        sampler = Metadynamics(system, variables, TOY_TEMPERATURE*unit.kelvin, 5.0, 1.0*unit.kilojoules_per_mole,
                               FREQUENCY, walkers.get('saveFrequency'), biasDir, **options)
    else:
        sampler = OPES(system, variables, TOY_TEMPERATURE*unit.kelvin, 12.0*unit.kilojoules_per_mole, FREQUENCY,
                       **walkers, **options)
    if platform == 'CPU' and OPENMM_VERSION < (8, 3):
        # OpenMM 8.2's CPU platform does not restore its random state from a checkpoint (8.6's does):
        # a deterministic integrator there, so that the comparison is of what the samplers restore
        integrator = openmm.VerletIntegrator(0.002)
    else:
        integrator = openmm.LangevinMiddleIntegrator(TOY_TEMPERATURE, 5.0, 0.002)
        integrator.setRandomNumberSeed(7)
    simulation = app.Simulation(topology, system, integrator, openmm.Platform.getPlatformByName(platform),
                                {'Threads': '2'} if platform == 'CPU' else {})
    simulation.context.setPositions(toy_separable_positions(dimensions))
    simulation.context.setVelocitiesToTemperature(TOY_TEMPERATURE, 7)
    return sampler, simulation


def results(sampler, simulation):
    """What must match: positions, the bias on the grid, the hills or kernels, c(t), the frames."""
    out = {'positions': simulation.context.getState(getPositions=True).getPositions(asNumpy=True)._value,
           'bias': sampler.getBias()._value, 'step': simulation.currentStep,
           'energy': simulation.context.getState(getEnergy=True).getPotentialEnergy()._value}
    if isinstance(sampler, Metadynamics):
        out['centers'], out['heights'] = sampler.getHillCenters(), sampler.getHillHeights()._value
        out['factorSteps'], out['factors'] = sampler.getReweightingFactors()
        out['factors'] = out['factors']._value
    else:
        out['centers'], out['sigmas'], out['heights'] = sampler.getKernels()
        history = sampler.getHistory()
        out['factorSteps'], out['factors'], out['zed'] = history.steps, history.rct._value, history.zed
    frames = sampler.getRecordedFrames()
    out['frameSteps'], out['frameBias'] = frames.steps, frames.bias._value
    return out


def phase(kind, platform, name, steps, folder):
    sampler, simulation = build(kind, platform)
    checkpoint = os.path.join(folder, 'run.chk')
    if name == 'second':
        sampler.loadCheckpoint(simulation, checkpoint)
        print('restarted at step %d' % simulation.currentStep)
    sampler.step(simulation, steps)
    if name == 'first':
        sampler.saveCheckpoint(simulation, checkpoint)
    np.savez(os.path.join(folder, name + '.npz'), **results(sampler, simulation))


def run_phase(kind, platform, name, steps, folder):
    done = subprocess.run([sys.executable, os.path.abspath(__file__), kind, platform, name, str(steps), str(folder)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def platforms():
    names = [openmm.Platform.getPlatform(i).getName() for i in range(openmm.Platform.getNumPlatforms())]
    return [name for name in ('Reference', 'CPU') if name in names]


@pytest.mark.parametrize('platform', platforms())
@pytest.mark.parametrize('kind', list(KINDS))
def test_restart_in_a_new_process(kind, platform, tmp_path):
    run_phase(kind, platform, 'full', 2*STEPS, tmp_path)
    run_phase(kind, platform, 'first', STEPS, tmp_path)
    assert 'restarted at step %d' % STEPS in run_phase(kind, platform, 'second', STEPS, tmp_path)
    full, second = np.load(tmp_path / 'full.npz'), np.load(tmp_path / 'second.npz')
    first = np.load(tmp_path / 'first.npz')
    assert int(second['step']) == 2*STEPS and len(first['factorSteps']) < len(full['factorSteps'])
    assert len(full['heights']) > 0 and np.abs(full['bias']).max() > 0
    for key in full.files:
        assert full[key].shape == second[key].shape, key
        np.testing.assert_allclose(second[key], full[key], rtol=1e-12, atol=1e-12, err_msg=key)


def test_state_pickles_and_restores_in_process():
    """getState() pickles; setState() on a new object gives the same bias in the Context and the same
    getters; the object keeps running from there like the original."""
    sampler, simulation = build('opes-1d-adaptive', 'Reference')
    sampler.step(simulation, STEPS)
    state = pickle.loads(pickle.dumps(sampler.getState()))
    other, otherSimulation = build('opes-1d-adaptive', 'Reference')
    otherSimulation.context.setState(simulation.context.getState(getPositions=True, getVelocities=True))
    other.setState(state, otherSimulation.context)
    energy = [s.context.getState(getEnergy=True, groups={sampler.force.getForceGroup()}).getPotentialEnergy()._value
              for s in (simulation, otherSimulation)]
    assert energy[1] == pytest.approx(energy[0], rel=1e-12, abs=1e-12) and energy[0] != 0
    for a, b in zip(sampler.getKernels(), other.getKernels()):
        np.testing.assert_array_equal(a, b)
    assert other.getHistory().zed.tolist() == sampler.getHistory().zed.tolist()


@pytest.mark.parametrize('cls', [Metadynamics, OPES])
def test_walker_keeps_its_id_and_index(cls, tmp_path):
    kind = 'metadynamics-1d' if cls is Metadynamics else 'opes-2d-explore'
    prefix = 'bias' if cls is Metadynamics else 'opes'
    sampler, simulation = build(kind, 'Reference', biasDir=str(tmp_path))
    sampler.step(simulation, 3*2*FREQUENCY)
    walkerId, index = sampler._id, sampler._saveIndex
    assert index == 4 and os.listdir(tmp_path).count('%s_%d_4.npy' % (prefix, walkerId)) == 1
    sampler.saveCheckpoint(simulation, str(tmp_path / 'run.chk'))
    other, otherSimulation = build(kind, 'Reference', biasDir=str(tmp_path))
    newId = other._id
    other.loadCheckpoint(otherSimulation, str(tmp_path / 'run.chk'))
    assert other._id == walkerId and other._saveIndex == index
    assert not [name for name in os.listdir(tmp_path) if name.startswith('%s_%d_' % (prefix, newId))]
    other.step(otherSimulation, 2*FREQUENCY)
    files = sorted(name for name in os.listdir(tmp_path) if name.startswith(prefix + '_'))
    assert files == ['%s_%d_5.npy' % (prefix, walkerId)]


@pytest.mark.parametrize('kind, changes, words', [
    ('metadynamics-1d', dict(biasDir='tmp_path'), ['saveFrequency: the state None, this object 40; walkers: the state False, '
                                            'this object True']),
    ('opes-2d-explore', dict(exploreMode=False), ["mode: the state 'OPES_METAD_EXPLORE', this object 'OPES_METAD'"]),
])
def test_state_of_other_settings(kind, changes, words, tmp_path):
    changes = {key: str(tmp_path) if value == 'tmp_path' else value for key, value in changes.items()}
    sampler, _ = build(kind, 'Reference')
    other, _ = build(kind, 'Reference', **changes)
    with pytest.raises(ValueError) as error:
        other.setState(sampler.getState())
    for word in words:
        assert word in str(error.value)


def test_state_of_other_grid_or_method():
    meta, _ = build('metadynamics-1d', 'Reference')
    opes, _ = build('opes-1d-adaptive', 'Reference')
    with pytest.raises(ValueError, match="OPES: setState: .*method: the state 'Metadynamics', this object 'OPES'"):
        opes.setState(meta.getState())
    system, _ = toy_system(1)
    wider = Metadynamics(system, [BiasVariable(toy_pair_cv(1), 0.0, 1.0, 0.1, gridWidth=51)],
                         TOY_TEMPERATURE*unit.kelvin, 5.0, 1.0*unit.kilojoules_per_mole, FREQUENCY)
    with pytest.raises(ValueError, match=r'grid: the state \[\[0.0, 1.0, 101\]\], this object \[\[0.0, 1.0, 51\]\]'):
        wider.setState(meta.getState())
    with pytest.raises(ValueError, match='setState needs a dictionary returned by Metadynamics.getState'):
        meta.setState([1, 2])


def test_load_a_plain_simulation_checkpoint(tmp_path):
    meta, simulation = build('metadynamics-1d', 'Reference')
    simulation.saveCheckpoint(str(tmp_path / 'plain.chk'))
    with pytest.raises(ValueError, match='plain.chk is not a checkpoint of Metadynamics.saveCheckpoint'):
        meta.loadCheckpoint(simulation, str(tmp_path / 'plain.chk'))



def _damaged(kind):
    """(key, value, message) of damaged states: a key missing, another shape, a value that is not finite,
    another type, counts that disagree."""
    if kind.startswith('metadynamics'):
        return [('selfBias', None, r"the state has no 'selfBias' \(a damaged dictionary of Metadynamics.getState\(\)\)"),
                ('totalBias', np.zeros(7), r"the state's 'totalBias' cannot be restored \(shape \(7,\), where this object "
                                           r"needs \(101,\)\)"),
                ('totalBias', np.full(101, np.nan), r"'totalBias' cannot be restored \(values that are not finite\)"),
                ('factor', float('nan'), r"'factor' cannot be restored \(nan is not finite\)"),
                ('frames', [(1, 2)], r"'frames' cannot be restored \(not enough values to unpack"),
                ('loadedBiases', [], r"'loadedBiases' cannot be restored"),
                ('hillHeights', [1.0], r'the state has \d+ hill centres and 1 hill heights')]
    return [('gridSum', None, r"the state has no 'gridSum'"),
            ('centers', np.zeros((3, 2)), r"'centers' cannot be restored \(shape \(3, 2\), where this object needs \(n, 1\)\)"),
            ('sigmas', 'narrow', r"'sigmas' cannot be restored"),
            ('zed', float('inf'), r"'zed' cannot be restored \(inf is not finite\)"),
            ('firstDeposit', 'yes', r"'firstDeposit' cannot be restored \('yes' is not True or False\)"),
            ('heights', np.ones(99), r'the state has \d+ kernel centres, \d+ widths and 99 heights')]


@pytest.mark.parametrize('kind', ['metadynamics-1d', 'opes-1d-adaptive'])
def test_damaged_state_changes_nothing(kind, tmp_path):
    """A damaged state (a key missing, another shape or type, NaN) is a ValueError naming the key, before
    anything is restored: it was a KeyError, a NumPy error or a silent NaN, with the object half
    restored. loadCheckpoint() of a file whose state is refused leaves the Context as it was (it loaded
    the Context first), and a Context checkpoint that cannot be loaded is a ValueError naming the file."""
    sampler, simulation = build(kind, 'Reference')
    sampler.step(simulation, STEPS)
    state = sampler.getState()
    other, otherSimulation = build(kind, 'Reference')
    other.step(otherSimulation, STEPS//2)
    before = pickle.dumps(other.getState())
    owner = type(sampler).__name__
    for key, value, message in _damaged(kind):
        damaged = dict(state)
        if value is None:
            del damaged[key]
        else:
            damaged[key] = value
        with pytest.raises(ValueError, match=r'^%s: setState: .*%s.*; nothing was restored$' % (owner, message)):
            other.setState(damaged, otherSimulation.context)
        assert pickle.dumps(other.getState()) == before, key
        with open(tmp_path/'damaged.chk', 'wb') as stream:
            pickle.dump({'format': 'openmmcoordination checkpoint', 'version': 1, 'context': b'', 'state': damaged}, stream)
        with pytest.raises(ValueError, match=message):
            other.loadCheckpoint(otherSimulation, str(tmp_path/'damaged.chk'))
        assert otherSimulation.currentStep == STEPS//2 and pickle.dumps(other.getState()) == before
    sampler.saveCheckpoint(simulation, str(tmp_path/'run.chk'))
    with open(tmp_path/'run.chk', 'rb') as stream:
        data = pickle.load(stream)
    data['context'] = b'not a checkpoint'
    with open(tmp_path/'context.chk', 'wb') as stream:
        pickle.dump(data, stream)
    with pytest.raises(ValueError, match=r"^%s: loadCheckpoint: the Context checkpoint in .*context.chk cannot be loaded "
                                         r"into this Simulation's Context \(OpenMMException: " % owner):
        other.loadCheckpoint(otherSimulation, str(tmp_path/'context.chk'))
    assert otherSimulation.currentStep == STEPS//2 and pickle.dumps(other.getState()) == before
    other.loadCheckpoint(otherSimulation, str(tmp_path/'run.chk'))             # the whole file: restored
    assert otherSimulation.currentStep == STEPS


def test_failed_save_keeps_the_earlier_checkpoint(tmp_path, monkeypatch):
    """A save that fails while it writes leaves the earlier checkpoint as it was and no temporary file
    (one was left beside it)."""
    sampler, simulation = build('metadynamics-1d', 'Reference')
    sampler.step(simulation, STEPS)
    path = tmp_path/'run.chk'
    sampler.saveCheckpoint(simulation, str(path))
    good = path.read_bytes()
    sampler.step(simulation, FREQUENCY)
    monkeypatch.setattr(sampler, 'getState', lambda: {'unpicklable': lambda: None})
    with pytest.raises((AttributeError, pickle.PicklingError)):
        sampler.saveCheckpoint(simulation, str(path))
    assert path.read_bytes() == good and os.listdir(tmp_path) == ['run.chk']



@pytest.mark.parametrize('cls', [Metadynamics, OPES])
def test_checkpoint_files_that_cannot_be_used(cls, tmp_path):
    """saveCheckpoint() to a path in a directory that does not exist, to a directory, to a text file or a
    bytes path is a ValueError naming the file (it was a FileNotFoundError or IsADirectoryError naming
    the temporary file, or a TypeError from pickle), before anything is written; loadCheckpoint() of a
    text file or a bytes path the same."""
    sampler, simulation = build('metadynamics-1d' if cls is Metadynamics else 'opes-1d-adaptive', 'Reference')
    name = cls.__name__
    missing = str(tmp_path/'missing'/'run.chk')
    with pytest.raises(ValueError, match=r"^%s: saveCheckpoint: file must be a path in an existing directory, got '%s' "
                       r"\(%s does not exist\)$" % (name, missing, tmp_path/'missing')):
        sampler.saveCheckpoint(simulation, missing)
    with pytest.raises(ValueError, match=r"^%s: saveCheckpoint: file must be a path in an existing directory, got '%s' "
                       r"\(a directory\)$" % (name, tmp_path)):
        sampler.saveCheckpoint(simulation, str(tmp_path))
    with open(tmp_path/'text.chk', 'w') as text:
        with pytest.raises(ValueError, match=r"^%s: saveCheckpoint: file must be a path or a file open for binary "
                           r"writing, got <_io.TextIOWrapper" % name):
            sampler.saveCheckpoint(simulation, text)
    with pytest.raises(ValueError, match=r"^%s: saveCheckpoint: file must be a path or a file open for binary writing, "
                       r"got b'run.chk'$" % name):
        sampler.saveCheckpoint(simulation, b'run.chk')
    assert os.listdir(tmp_path) == ['text.chk'] and (tmp_path/'text.chk').read_bytes() == b''
    sampler.saveCheckpoint(simulation, str(tmp_path/'run.chk'))
    with open(tmp_path/'run.chk') as text:
        with pytest.raises(ValueError, match=r"^%s: loadCheckpoint: file must be a path or a file open for binary "
                           r"reading, got <_io.TextIOWrapper" % name):
            sampler.loadCheckpoint(simulation, text)
    with open(tmp_path/'run.chk', 'rb') as binary:
        sampler.loadCheckpoint(simulation, binary)


if __name__ == '__main__':
    phase(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
