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
    with pytest.raises(ValueError, match=r'\(collectiveVariables: variables\[0\]\.force: its GroupB\)'):
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
