"""Walker files in biasDir (issue 41 item 3), for Metadynamics and OPES: a file that cannot be read
when the object is created is a ValueError naming the file and why; the directory records the
settings that make the walkers' biases addable and refuses a walker with others (naming both); a
file that cannot be read later is retried at the next exchange, and named by a RuntimeWarning if
it still cannot be read at the one after."""

import json
import os
import warnings

import numpy as np
import pytest

from openmm import unit

from openmmcoordination import OPES, Metadynamics
from openmmcoordination.metadynamics import BiasVariable

from gr_helpers import TOY_TEMPERATURE, toy_pair_cv, toy_system
from test_checkpoint import FREQUENCY, build

PREFIX = {Metadynamics: 'bias', OPES: 'opes'}
KIND = {Metadynamics: 'metadynamics-1d', OPES: 'opes-2d-explore'}
EXCHANGE = 2*FREQUENCY          # test_checkpoint.build's saveFrequency


def _valid_file(cls, sampler):
    """The content of a valid file of another walker for ``sampler``'s grid: a bias, or kernel rows."""
    if cls is Metadynamics:
        return np.ones(sampler.getBias()._value.shape)
    dimensions = len(sampler.variables)
    return np.array([[0.5]*dimensions + [0.05]*dimensions + [1.0, 0.0]])


@pytest.mark.parametrize('cls', [Metadynamics, OPES])
def test_unreadable_file_at_creation(cls, tmp_path):
    path = tmp_path/('%s_17_1.npy' % PREFIX[cls])
    path.write_bytes(b'not a NumPy file')
    with pytest.raises(ValueError) as error:
        build(KIND[cls], 'Reference', biasDir=str(tmp_path))
    message = str(error.value)
    assert message.startswith(cls.__name__ + ': biasDir holds %s, which cannot be read as a NumPy array' % path)
    assert "(not a .npy file: it starts with b'not a ', not the .npy magic string)" in message
    assert os.listdir(tmp_path) == ['%s_17_1.npy' % PREFIX[cls]]                # nothing written
    assert path.read_bytes() == b'not a NumPy file'            # the user's file is left alone


def _metadynamics(biasDir, temperature=300.0, r0=None, partner=1):
    system, _ = toy_system(2)
    force = toy_pair_cv(partner)
    if r0 is not None:
        force.setR0(r0)
    return Metadynamics(system, [BiasVariable(force, 0.0, 1.0, 0.1, gridWidth=101)], temperature*unit.kelvin, 5.0,
                        1.0*unit.kilojoules_per_mole, FREQUENCY, EXCHANGE, biasDir)


def test_directory_of_other_settings_metadynamics(tmp_path):
    first = _metadynamics(str(tmp_path))
    recorded = json.load(open(tmp_path/'settings_Metadynamics.json'))
    assert recorded['temperature'] == 300.0 and recorded['biasFactor'] == 5.0
    assert recorded['grid'] == [[0.0, 1.0, 101]] and 'r0=".3"' in recorded['collectiveVariables'][0]
    files = sorted(os.listdir(tmp_path))
    with pytest.raises(ValueError, match=r'Metadynamics: biasDir %s was written by walkers with other settings '
                       r'\(temperature: the directory 300.0, this run 350.0\)' % tmp_path):
        _metadynamics(str(tmp_path), temperature=350.0)
    with pytest.raises(ValueError, match=r'\(collectiveVariables: variables\[0\]\.force: dmax the directory 2\.04.*, '
                       r'this run 2\.1.*; r0 the directory \.3, this run \.31\)'):
        _metadynamics(str(tmp_path), r0=0.31)
    with pytest.raises(ValueError, match=r'\(collectiveVariables: variables\[0\]\.force: its GroupB the directory '
                       r'<GroupB><Particle index="1" /></GroupB>, this run <GroupB><Particle index="2" /></GroupB>\)'):
        _metadynamics(str(tmp_path), partner=2)
    assert sorted(os.listdir(tmp_path)) == files                     # nothing written by the refused walkers
    second = _metadynamics(str(tmp_path))                             # the same settings: accepted
    assert second._id != first._id


def test_directory_of_other_settings_opes(tmp_path):
    build('opes-2d-explore', 'Reference', biasDir=str(tmp_path))
    with pytest.raises(ValueError, match=r"OPES: biasDir .* other settings \(mode: the directory 'OPES_METAD_EXPLORE', "
                       r"this run 'OPES_METAD'; epsilon: "):
        build('opes-2d-explore', 'Reference', biasDir=str(tmp_path), exploreMode=False)
    system, _ = toy_system(2)
    variables = [BiasVariable(toy_pair_cv(k + 1), 0.0, 1.0, 0.1, gridWidth=101) for k in range(2)]
    with pytest.raises(ValueError, match=r'barrier: the directory 12.0, this run 10.0; biasFactor: the directory '):
        OPES(system, variables, TOY_TEMPERATURE*unit.kelvin, 10.0*unit.kilojoules_per_mole, FREQUENCY, exploreMode=True,
             sigma=[0.06, 0.05], saveFrequency=EXCHANGE, biasDir=str(tmp_path))


@pytest.mark.parametrize('cls', [Metadynamics, OPES])
def test_unreadable_file_later_is_retried_then_named(cls, tmp_path):
    sampler, simulation = build(KIND[cls], 'Reference', biasDir=str(tmp_path))
    path = tmp_path/('%s_17_1.npy' % PREFIX[cls])
    path.write_bytes(b'half a file')
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        sampler.step(simulation, EXCHANGE)                    # the first exchange: retried at the next, no warning
    with pytest.warns(RuntimeWarning, match='%s: the walker file %s could not be read at two exchanges in a row'
                      % (cls.__name__, path)):
        sampler.step(simulation, EXCHANGE)
    # once readable, it is read
    np.save(path, _valid_file(cls, sampler))
    sampler.step(simulation, EXCHANGE)
    if cls is Metadynamics:
        assert 17 in sampler._loadedBiases
    else:
        assert sampler._seenFiles[17] == 1 and sampler._readRows[17] == 1


@pytest.mark.parametrize('cls', [Metadynamics, OPES])
def test_file_unreadable_once_is_read_at_the_next_exchange(cls, tmp_path):
    sampler, simulation = build(KIND[cls], 'Reference', biasDir=str(tmp_path))
    path = tmp_path/('%s_17_1.npy' % PREFIX[cls])
    path.write_bytes(b'half a file')
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        sampler.step(simulation, EXCHANGE)
        np.save(path, _valid_file(cls, sampler))               # its writer finished it
        before = sampler.getBias()._value.copy()
        sampler.step(simulation, EXCHANGE)
    if cls is Metadynamics:
        own = sampler._selfBias
        np.testing.assert_allclose(sampler.getBias()._value, own + 1.0, rtol=1e-12)
        assert before.max() < (own + 1.0).max()
    else:
        assert sampler._readRows[17] == 1


@pytest.mark.parametrize('cls', [Metadynamics, OPES])
def test_file_of_values_that_are_not_finite(cls, tmp_path):
    """A walker file of NaN (a walker whose run blew up) or of text is named at creation (it was an
    OpenMMException of the table that named no file); during the run it is left out (the bias stays
    finite: the NaN went into the bias and the step failed), as a file that cannot be read."""
    path = tmp_path/('%s_17_1.npy' % PREFIX[cls])
    clean = tmp_path/'clean'
    clean.mkdir()
    sampler, simulation = build(KIND[cls], 'Reference', biasDir=str(clean))
    valid = _valid_file(cls, sampler)
    np.save(path, np.full(valid.shape, np.nan))
    with pytest.raises(ValueError, match=r'^%s: biasDir holds %s, which holds values that are not finite \(%d of %d\); '
                       r'remove it or use another biasDir$' % (cls.__name__, path, valid.size, valid.size)):
        build(KIND[cls], 'Reference', biasDir=str(tmp_path))
    np.save(path, np.array(['a']*valid.size).reshape(valid.shape))
    with pytest.raises(ValueError, match=r'which is not an array of numbers \(dtype <U1\)'):
        build(KIND[cls], 'Reference', biasDir=str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == sorted(['%s_17_1.npy' % PREFIX[cls], 'clean'])       # nothing written
    nan = clean/('%s_17_1.npy' % PREFIX[cls])
    np.save(nan, np.full(valid.shape, np.nan))
    sampler.step(simulation, EXCHANGE)
    with pytest.warns(RuntimeWarning, match='could not be read at two exchanges in a row \\(holds values that are not finite'):
        sampler.step(simulation, EXCHANGE)
    assert np.all(np.isfinite(sampler.getBias()._value)) and np.abs(sampler.getBias()._value).max() > 0


def test_kernels_of_widths_that_are_not_positive(tmp_path):
    """OPES: a kernel file of widths <= 0 is named (it divided by zero and made the bias NaN)."""
    sampler, _ = build('opes-2d-explore', 'Reference')
    rows = _valid_file(OPES, sampler)
    rows[0, 3] = 0.0
    np.save(tmp_path/'opes_17_1.npy', rows)
    with pytest.raises(ValueError, match=r'^OPES: biasDir holds .*opes_17_1.npy, kernels whose widths \(columns 2 to 3\) '
                       r'are not all positive; use another biasDir$'):
        build('opes-2d-explore', 'Reference', biasDir=str(tmp_path))


@pytest.mark.parametrize('cls', [Metadynamics, OPES])
def test_settings_file_that_is_not_an_object(cls, tmp_path):
    (tmp_path/('settings_%s.json' % cls.__name__)).write_text('[1, 2]')
    with pytest.raises(ValueError, match=r'^%s: biasDir holds .*settings_%s.json, which cannot be read \(a JSON list, not '
                       r'the object of settings' % (cls.__name__, cls.__name__)):
        build(KIND[cls], 'Reference', biasDir=str(tmp_path))
    assert os.listdir(tmp_path) == ['settings_%s.json' % cls.__name__]


@pytest.mark.parametrize('cls', [Metadynamics, OPES])
def test_two_walkers_restored_from_one_checkpoint(cls, tmp_path):
    """Two walkers restored from one checkpoint share its id: the second to write finds the first's file
    and says so, instead of writing over it (the first's hills were lost from biasDir)."""
    sampler, simulation = build(KIND[cls], 'Reference', biasDir=str(tmp_path))
    sampler.step(simulation, EXCHANGE)
    sampler.saveCheckpoint(simulation, str(tmp_path/'run.chk'))
    walkers = []
    for _ in range(2):
        walker, walkerSimulation = build(KIND[cls], 'Reference', biasDir=str(tmp_path))
        walker.loadCheckpoint(walkerSimulation, str(tmp_path/'run.chk'))
        walkers.append((walker, walkerSimulation))
    (first, firstSimulation), (second, secondSimulation) = walkers
    first.step(firstSimulation, EXCHANGE)
    name = '%s_%d_%d.npy' % (PREFIX[cls], first._id, first._saveIndex)
    written = (tmp_path/name).read_bytes()
    with pytest.raises(ValueError, match=r"^%s: biasDir %s already holds %s: another walker writes under this walker's "
                       r"id %d \(two walkers restored from one state or checkpoint\?\)" % (cls.__name__, tmp_path, name,
                                                                                        first._id)):
        second.step(secondSimulation, EXCHANGE)
    assert (tmp_path/name).read_bytes() == written and not [f for f in os.listdir(tmp_path) if f.startswith('temp_')]


@pytest.mark.parametrize('cls', [Metadynamics, OPES])
def test_directory_that_cannot_be_written(cls, tmp_path, monkeypatch):
    """A biasDir this process cannot write to is a ValueError naming it when the object is created (it was
    a PermissionError from inside, after the directory's files were read). os.access is replaced: the
    tests may run as root, who can write anywhere."""
    import openmmcoordination._gridbias as gridbias
    monkeypatch.setattr(gridbias.os, 'access', lambda path, mode: False)
    with pytest.raises(ValueError, match=r"^%s: biasDir must be a directory this process can write to \(its walker files "
                       r"go there\), got '%s'$" % (cls.__name__, tmp_path)):
        build(KIND[cls], 'Reference', biasDir=str(tmp_path))
    assert os.listdir(tmp_path) == []
