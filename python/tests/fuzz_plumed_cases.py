"""The `plumed` fuzzer's case (fuzz_cases.py runs it as one of its kinds): a PLUMED input, one of
PLUMED's regression tests or an input below, with one or two mutations (a number or a keyword's
value replaced, a token cut or replaced by a keyword, a keyword added, a line repeated, cut, swapped
or taken from another input, a character added or cut, the input truncated), read by
openmmcoordination.plumed.load() against a System of 400 particles and, where it loads, attached to a
Reference Simulation (its files in a temporary folder) that steps three times.

A clear refusal is a PlumedInputError (the line, the action and the keyword) or an OpenMMException
of the forces (which names them); any other exception is unexpected (raised as Unclear).
"""

import glob
import os
import re
import sys
import tempfile

import numpy as np

import openmm
from openmm import app

from openmmcoordination import plumed

HERE = os.path.dirname(os.path.abspath(__file__))
INPUTS = [
    'c: COORDINATION GROUPA=1-4 GROUPB=5-40 R_0=0.3 NN=6 MM=12\n'
    'metad: METAD ARG=c SIGMA=0.2 HEIGHT=1 PACE=2 BIASFACTOR=5 TEMP=300 GRID_MIN=0 GRID_MAX=20 GRID_BIN=100 FILE=HILLS\n'
    'PRINT ARG=c,metad.bias STRIDE=1 FILE=COLVAR\n',
    'UNITS LENGTH=A ENERGY=kcal/mol\nd: DISTANCE ATOMS=1,2 COMPONENTS\nc: COORDINATION GROUPA=1 GROUPB=3-30 R_0=3\n'
    'f: CUSTOM ARG=d.x,c FUNC=x*y+0.5*x^2 PERIODIC=NO\nUPPER_WALLS ARG=f AT=4 KAPPA=10 EXP=2 EPS=1 OFFSET=0\n'
    'DUMPDERIVATIVES ARG=d.x FILE=deriv FMT=%10.5f\nDUMPDERIVATIVES ARG=f FILE=fderiv\n',
    'c: COORDINATION GROUPA=1-3 GROUPB=4-30 SWITCH={RATIONAL R_0=0.3 D_MAX=1.0}\n'
    'o: OPES_METAD ARG=c PACE=2 BARRIER=20 TEMP=300 SIGMA=ADAPTIVE SIGMA_MIN=0.05 ADAPTIVE_SIGMA_STRIDE=4\n'
    'PRINT ARG=c,o.bias,o.zed STRIDE=1 FILE=COLVAR\n',
    'cn: COORDINATIONNUMBER SPECIESA=1-10 SPECIESB=11-60 SWITCH={RATIONAL R_0=0.3} MORE_THAN={RATIONAL R_0=2} MEAN\n'
    'RESTRAINT ARG=cn.morethan AT=3 KAPPA=5\nPRINT ARG=cn.mean,cn.morethan FILE=COLVAR\n',
    'g: GROUP ATOMS=1-20 REMOVE=3,4\nc: COORDINATION GROUPA=g SWITCH={CUSTOM FUNC=1/(1+x2^3) R_0=0.3 D_MAX=0.9}\n'
    'e: COORDINATION GROUPA=g SWITCH={Q REF=0.3 BETA=50 LAMBDA=1.8}\n'
    's: COMBINE ARG=c,e COEFFICIENTS=1,-1 PERIODIC=NO\nLOWER_WALLS ARG=s AT=-1 KAPPA=2\nPRINT ARG=c,e,s FILE=COLVAR\n',
]
VALUES = ['-1', '0', '-0', 'nan', 'inf', '1e308', '1e-320', '', 'abc', '1,2', '{', '}', '...', '2.5', '3', '1000000',
          '10-1', '#', 'x', 'x2', 'pi', '1/0', 'sqrt(-1)', '2^1000', '(-1)^x', 'out/', ',', '=']
KEYWORDS = ['R_0', 'D_0', 'NN', 'MM', 'D_MAX', 'GROUPA', 'GROUPB', 'ATOMS', 'ARG', 'SIGMA', 'HEIGHT', 'PACE', 'BIASFACTOR',
            'TEMP', 'GRID_MIN', 'GRID_MAX', 'GRID_BIN', 'GRID_SPACING', 'KAPPA', 'AT', 'SLOPE', 'EXP', 'EPS', 'OFFSET',
            'STRIDE', 'FILE', 'FMT', 'SWITCH', 'NOPBC', 'PAIR', 'SPECIES', 'SPECIESA', 'SPECIESB', 'MORE_THAN', 'LESS_THAN',
            'BETWEEN', 'MEAN', 'MIN', 'MAX', 'MOMENTS', 'COEFFICIENTS', 'POWERS', 'FUNC', 'VAR', 'PERIODIC', 'BARRIER',
            'SIGMA_MIN', 'EXTRA_BIAS', 'COMPONENTS', 'REMOVE', 'SORT', 'ENERGY', 'LENGTH', 'TIME', 'LABEL', 'NLIST',
            'CALC_RCT', 'WALKERS_DIR', 'R_POWER', 'LOWEST', 'HIGHEST', 'NUMERICAL_DERIVATIVES']
TOKEN = re.compile(r'[^\s=,{}]+')


class Unclear(Exception):
    """An exception that names neither the input's line nor the force."""


def inputs():
    """The inputs to mutate: PLUMED's regression tests (python/tests/data/plumed-regtests) and INPUTS."""
    if not hasattr(inputs, 'cached'):
        regtests = sorted(glob.glob(os.path.join(HERE, 'data', 'plumed-regtests', '*', 'plumed.dat')))
        inputs.cached = [open(path).read() for path in regtests] + INPUTS
    return inputs.cached


def _replace(text, match, new):
    return text[:match.start()] + new + text[match.end():]


def mutate(rng, text):
    """One or two mutations of a PLUMED input."""
    for _ in range(rng.randrange(1, 3)):
        lines = text.split('\n')
        roll = rng.randrange(9)
        tokens = list(TOKEN.finditer(text))
        values = list(re.finditer(r'(?<==)[^\s{}]+', text))
        numbers = list(re.finditer(r'-?\d+(\.\d+)?(e-?\d+)?', text))
        if roll == 0 and numbers:
            text = _replace(text, rng.choice(numbers), rng.choice(VALUES))
        elif roll == 1 and values:
            text = _replace(text, rng.choice(values), rng.choice(VALUES))
        elif roll == 2 and tokens:
            text = _replace(text, rng.choice(tokens), rng.choice(['', rng.choice(KEYWORDS)]))
        elif roll == 3:
            k = rng.randrange(len(lines))
            lines[k] += ' %s=%s' % (rng.choice(KEYWORDS), rng.choice(VALUES + ['1', 'c', 'c,c', '1-10']))
            text = '\n'.join(lines)
        elif roll == 4:
            k, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            how = rng.randrange(3)
            if how == 0:
                lines.insert(j, lines[k])
            elif how == 1:
                del lines[k]
            else:
                lines[k], lines[j] = lines[j], lines[k]
            text = '\n'.join(lines)
        elif roll == 5:
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(rng.choice(inputs()).split('\n')))
            text = '\n'.join(lines)
        elif roll == 6:
            k = rng.randrange(len(text) + 1)
            text = text[:k] + rng.choice('{}=,#.\n\\ :@-') + text[k:]
        elif roll == 7 and text:
            k = rng.randrange(len(text))
            text = text[:k] + text[k + 1:]
        else:
            text = text[:rng.randrange(len(text) + 1)]
    return text if '\n' in text else text + '\n'


def _system():
    system = openmm.System()
    for _ in range(400):
        system.addParticle(16.0)
    system.setDefaultPeriodicBoxVectors(openmm.Vec3(4, 0, 0), openmm.Vec3(0, 4, 0), openmm.Vec3(0, 0, 4))
    return system


def plumed_case(rng, platform):
    """A mutant input: loaded, and where it loads attached to a Simulation that steps three times."""
    text = mutate(rng, rng.choice(inputs()))
    system = _system()
    integrator = openmm.LangevinMiddleIntegrator(300, 1, 0.001)
    positions = np.array([[rng.uniform(0, 4) for _ in range(3)] for _ in range(400)])
    stdout, cwd = sys.stdout, os.getcwd()
    try:
        with tempfile.TemporaryDirectory() as folder:
            os.chdir(folder)                        # WALKERS_DIR=. and the like
            loaded = plumed.load(text, system, integrator=integrator)
            simulation = app.Simulation(app.Topology(), system, integrator, platform)
            simulation.context.setPositions(positions)
            sys.stdout = open(os.devnull, 'w')      # a PRINT without FILE
            loaded.attach(simulation, folder)
            loaded.step(simulation, 3)
            loaded.close()
    except (plumed.PlumedInputError, openmm.OpenMMException):
        raise
    except Exception as error:
        raise Unclear('%s: %s' % (type(error).__name__, error)) from error
    finally:
        os.chdir(cwd)
        if sys.stdout is not stdout:
            sys.stdout.close()
            sys.stdout = stdout


def describe(rng):
    """The mutant input of a case."""
    return mutate(rng, rng.choice(inputs()))
