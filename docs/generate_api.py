"""Generate the API reference pages from the sources, so they never drift from them:

- docs/api-cpp.md from the Doxygen comments of openmmapi/include/CoordinationForce.h and
  CoordinationBiasForce.h (a small parser of the comment blocks; no Doxygen installation needed);
- docs/api-python.md from the docstrings of the pure-Python modules of openmmcoordination, plus
  the Python view of CoordinationForce and CoordinationBiasForce (taken from the same headers).

    python docs/generate_api.py            # rewrite both pages (needs openmmcoordination importable)
    python docs/generate_api.py --check    # exit 1 if a page is out of date (run by the tests)
"""

import argparse
import importlib
import inspect
import os
import re
import sys
import textwrap

DOCS = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(DOCS, '..', 'openmmapi', 'include', 'CoordinationForce.h')
BIAS_HEADER = os.path.join(DOCS, '..', 'openmmapi', 'include', 'CoordinationBiasForce.h')
MODULES = ['gr', 'reporters', 'analysis', 'metadynamics', 'opes', 'cvfunction', 'distancecv', 'reweighting', 'contacts', 'plumed', 'plumed.outputs', 'plots', 'cli',
           'cpp_config']


# ---------------------------------------------------------------------------------------------
# C++: the Doxygen comments of the header

def _clean(comment):
    """The text of a /** ... */ block, without the comment markers and leading asterisks."""
    body = comment.strip()
    body = re.sub(r'^/\*\*<?', '', body)
    body = re.sub(r'\*/$', '', body)
    lines = [re.sub(r'^\s*\* ?', '', line) for line in body.splitlines()]
    return textwrap.dedent('\n'.join(lines)).strip()


# The Python examples of the headers' class comments are fragments (no System or Context): the docs test
# (python/tests/test_docs_run.py) leaves them out, and README.md and docs/bias-force.md run the same calls.
NOT_RUN = '<!-- not run: a fragment of the class comment; README.md and docs/bias-force.md run the same calls -->\n'


# The modules' >>> examples run in the order of the page after this setup (python/tests/test_docs_run.py
# runs them as a reader would paste them: docs_blocks.py takes the >>> and ... lines of a ```text block).
EXAMPLES_SETUP = """## The examples

The `>>>` examples of the modules below run in order, in one Python session, after this setup, on the
Na+/Cl- box that ships in the repository (`COORDINATION_QUICK=1`, the docs test's size switch,
shortens their runs):

```python
import os
import openmm, openmm.app as app
from openmm.app import Simulation
from openmm.unit import kelvin, kilojoules_per_mole
from openmmcoordination import (BiasVariable, CollectiveVariableReporter, CoordinationForce, Metadynamics, OPES,
                                PairDistributionAccumulator, PairDistributionReporter, addHistogramForce,
                                analyzeTrajectory, reweightedFreeEnergy)

pdb = app.PDBFile('examples/data/nacl_water.pdb')          # Na+ (atom 0), Cl- (atom 1), 332 TIP3P waters
topology, positions = pdb.topology, pdb.positions
na, cl, ions = 0, 1, [0]
oxygens = [a.index for a in topology.atoms() if a.residue.name == 'HOH' and a.name == 'O']

def newSystem():
    \"\"\"The box's System and an integrator (a Simulation takes an integrator of its own).\"\"\"
    system = app.ForceField('amber14-all.xml', 'amber14/tip3p.xml').createSystem(topology, nonbondedMethod=app.PME,
                                                                                  constraints=app.HBonds)
    return system, openmm.LangevinMiddleIntegrator(300*kelvin, 1.0, 0.002)

system, integrator = newSystem()
steps = 1000 if os.environ.get('COORDINATION_QUICK') == '1' else 100000
```"""
# Modules whose examples do not run here, and why.
NOT_RUN_EXAMPLES = {'plumed': '<!-- not run: it needs a plumed.dat; docs/plumed-input.md runs these calls on one of its own -->'}


def _markdown(text):
    """Doxygen markup to Markdown: @param lists, @return, verbatim blocks."""
    text = re.sub(r'\\verbatim embed:rst:leading-asterisk\s*\n\s*\.\. code-block:: (\w+)\s*\n(.*?)\\endverbatim',
                  lambda m: '%s```%s\n%s\n```' % (NOT_RUN if m.group(1) == 'python' else '', m.group(1),
                                                   textwrap.dedent(m.group(2)).strip()), text, flags=re.S)
    out = []
    for line in text.splitlines():
        param = re.match(r'@param(\[out\])?\s+(\w+)\s+(.*)', line.strip())
        if param:
            out.append('- `%s`%s: %s' % (param.group(2), ' (output)' if param.group(1) else '', param.group(3)))
        elif line.strip().startswith('@return'):
            out.append('- returns: ' + line.strip()[len('@return'):].strip())
        else:
            out.append(line)
    return '\n'.join(out).strip()


def parseHeader(path=HEADER, className='CoordinationForce'):
    """(class comment, [(enum name, comment, [(member, value, comment)])], [(signature, comment)])."""
    with open(path) as f:
        source = f.read()
    classStart = source.index('class OPENMM_EXPORT_COORDINATION %s ' % className)
    classComment = _clean(source[:classStart].rsplit('/**', 1)[1].rsplit('*/', 1)[0].join(['/**', '*/']))
    body = source[classStart:source.index('protected:', classStart)]
    enums, methods = [], []
    pattern = re.compile(r'/\*\*(?!<)(.*?)\*/\s*(enum\s+(\w+)\s*\{(.*?)\};|[^;{]*?(?:;|\{[^}]*\}))', re.S)
    for match in pattern.finditer(body):
        comment = _clean('/**' + match.group(1) + '*/')
        if match.group(3):
            members = re.findall(r'(\w+)\s*=\s*(\d+),?\s*/\*\*<(.*?)\*/', match.group(4))
            enums.append((match.group(3), comment, [(n, v, c.strip()) for n, v, c in members]))
        else:
            declaration = ' '.join(match.group(2).split())
            declaration = re.sub(r'\s*\{.*\}$', ';', declaration)
            methods.append((declaration, comment))
    return classComment, enums, methods


def cppPage():
    classComment, enums, methods = parseHeader()
    lines = ['# C++ API reference', '',
             '<!-- Generated by docs/generate_api.py from openmmapi/include/CoordinationForce.h; do not edit. -->', '',
             '`#include "CoordinationForce.h"`, namespace `CoordinationPlugin`, library `libOpenMMCoordination` '
             '(CMake: `find_package(OpenMMCoordination CONFIG)`, target `OpenMMCoordination::OpenMMCoordination`; '
             'building a program: [installation.md](installation.md), "C++ programs"). '
             'Distances are in nm, energies in kJ/mol.', '',
             '## class CoordinationForce : public OpenMM::Force', '', _markdown(classComment), '']
    for name, comment, members in enums:
        lines += ['### enum %s' % name, '', _markdown(comment), '', '| value | | meaning |', '|---|---|---|']
        lines += ['| `%s` | %s | %s |' % (n, v, c.replace('|', '\\|')) for n, v, c in members]
        lines.append('')
    lines += ['### Methods', '']
    for declaration, comment in methods:
        lines += ['```cpp', declaration, '```', '', _markdown(comment), '']
    classComment, _, methods = parseHeader(BIAS_HEADER, 'CoordinationBiasForce')
    lines += ['## class CoordinationBiasForce : public OpenMM::Force', '',
              '`#include "CoordinationBiasForce.h"`; see [bias-force.md](bias-force.md).', '', _markdown(classComment), '',
              '### Methods', '']
    for declaration, comment in methods:
        lines += ['```cpp', declaration, '```', '', _markdown(comment), '']
    return '\n'.join(lines).rstrip() + '\n'


# ---------------------------------------------------------------------------------------------
# Python: the docstrings of the pure-Python modules

PYTHON_FORCE = '''## openmmcoordination.CoordinationForce

The C++ class through SWIG, with the same methods (see [api-cpp.md](api-cpp.md)); `help()` shows
the Doxygen text. What differs in Python:

- groups are any sequence of integers (lists, ranges, NumPy arrays); `getGroupA()`/`getGroupB()` return lists;
- `getR0()`, `getD0()`, `getDMax()` return `openmm.unit.Quantity` in nm (`getBeta()` in 1/nm); their setters, `evaluateSwitchingFunction(r)`,
  `evaluatePairSwitchingFunction(pair, r)` and the histograms' `maxDistance` accept floats (nm) or Quantities, converted
  as OpenMM's setters of distances convert them (a Quantity of another dimension: `TypeError`);
- `evaluateSwitchingFunction(r)` and `evaluatePairSwitchingFunction(pair, r)` return the list `[s, ds/dr]`;
- `getPairHistogram()` and `getAccumulatedPairHistogram()` return `int64` NumPy arrays;
- `getTabulatedFunction(i)` returns the `openmm.Continuous1DFunction`, to change and then `updateParametersInContext(context)`;
- C++ exceptions arrive as `openmm.OpenMMException`;
- `copy.copy`/`copy.deepcopy` clone through the serialization proxy; `pickle` gives back a force of the same class;
- `CoordinationForce.cast(force)`: the CoordinationForce that a Force of a System is (`system.getForce(i)`,
  `system.getForces()` and `XmlSerializer.deserialize()` give an `openmm.Force`), the same object, or None;
  of a Force that Python owns (`XmlSerializer.deserialize()`'s), the result takes the object over.

Methods (C++ signatures):

'''

PYTHON_BIAS_FORCE = '''## openmmcoordination.CoordinationBiasForce

Several CoordinationForce CVs biased by one energy expression (see [bias-force.md](bias-force.md)
and [api-cpp.md](api-cpp.md)). What differs in Python:

- `addCollectiveVariable(name, force)` and `addTabulatedFunction(name, table)` pass ownership to
  the bias force (the Python object's `thisown` becomes False); a CoordinationForce that Python
  does not own (already in a System or another bias force) is refused;
- `getCollectiveVariableValues(context)` returns a list of floats;
- `getCVStatistics(context)` returns the tuple `(mean, m2, count)`: two NumPy arrays (one value per CV) and an int;
- `getTabulatedFunction(i)` returns the `openmm.Continuous1DFunction`, `Continuous2DFunction` or `Continuous3DFunction`;
- `copy.copy`/`copy.deepcopy` clone through the serialization proxy; `pickle` gives back a force of the same class;
- `CoordinationBiasForce.cast(force)`: the CoordinationBiasForce that a Force of a System is, or None (as
  `CoordinationForce.cast`).

Methods (C++ signatures):

'''


class _Default:
    """A default value written as the page shows it: a Quantity as '<value> <unit symbol>', the
    same on every OpenMM version (the repr of a Quantity differs between them)."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        if hasattr(self.value, 'unit') and hasattr(self.value, 'value_in_unit'):
            return '%r %s' % (self.value.value_in_unit(self.value.unit), self.value.unit.get_symbol())
        return repr(self.value)


def _signature(obj):
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return '(...)'
    parameters = [p.replace(default=_Default(p.default)) if p.default is not inspect.Parameter.empty else p
                  for p in signature.parameters.values()]
    return str(signature.replace(parameters=parameters))


def _doc(obj):
    return inspect.cleandoc(obj.__doc__ or '').strip()


def _classLines(name, cls):
    """A class: its signature and docstring, then one line per public property and method."""
    lines = ['### class %s%s' % (name, _signature(cls.__init__).replace('(self, ', '(').replace('(self)', '()')),
             '', '```text', _doc(cls), '```', '']
    for attribute, member in sorted(vars(cls).items()):
        if attribute.startswith('_'):
            continue
        if isinstance(member, property):
            lines += ['- `%s` (property): %s' % (attribute, _doc(member).splitlines()[0] if _doc(member) else '')]
        elif inspect.isfunction(member) or isinstance(member, classmethod):
            function = member.__func__ if isinstance(member, classmethod) else member
            signature = _signature(function).replace('(self, ', '(').replace('(self)', '()').replace('(cls, ', '(')
            lines += ['- `%s%s`: %s' % (attribute, signature, ' '.join(_doc(function).split()))]
    lines.append('')
    return lines


def pythonPage():
    lines = ['# Python API reference', '',
             '<!-- Generated by docs/generate_api.py from the docstrings; do not edit. -->', '',
             '`import openmmcoordination` loads the plugin and exports `CoordinationForce` and the names below '
             '(matplotlib, MDAnalysis and tqdm are imported only when a plot, a trajectory or a progress bar is '
             'needed). Distances in nm, times in ps, energies in kJ/mol.', '',
             'Names follow OpenMM\'s conventions (camelCase, `frequency` for the steps between updates, '
             'Quantities where a unit applies: energies, temperatures, distances; coordination numbers have '
             'none, so CV values, grids, hill centres, kernel widths and Z are plain floats and arrays, and a '
             'dimensionless Quantity is accepted where a CV value is given). **Aliases**, earlier names kept so that old scripts run: '
             '`setEnergyExpression` and `getEnergyExpression` of both forces for `setEnergyFunction` and '
             '`getEnergyFunction` (CustomCVForce\'s names), `OPES(pace=...)` and `OPES.pace` for `frequency`, `OPES(explore=...)` and `OPES.explore` for '
             '`exploreMode`, `native_contacts` for `nativeContacts`, `find_native_contacts` for '
             '`findNativeContacts` (r0s a plain array in nm, where `findNativeContacts` returns a Quantity). '
             'Distances and volumes of a `PairDistribution` as plain numbers (nm, nm^3), as before issue 44: the attributes `r`, '
             '`edges`, `width`, `validMax`, `cellMax`, `volume`, `density` and the methods `firstPeak()`, '
             '`firstMinimum()`, beside the getters that return Quantities (`getBinCenters()`, `getBinEdges()`, '
             '`getBinWidths()`, `getFirstPeak()`, `getFirstMinimum()`, `getValidMax()`, `getCellMax()`, '
             '`getVolume()`, `getDensity()`).', '']
    _, _, methods = parseHeader()
    lines.append(PYTHON_FORCE.rstrip('\n'))
    lines.append('')
    lines += ['- `%s`' % declaration.rstrip(';') for declaration, _ in methods]
    lines.append('')
    _, _, methods = parseHeader(BIAS_HEADER, 'CoordinationBiasForce')
    lines.append(PYTHON_BIAS_FORCE.rstrip('\n'))
    lines.append('')
    lines += ['- `%s`' % declaration.rstrip(';') for declaration, _ in methods]
    lines.append('')
    lines += EXAMPLES_SETUP.splitlines() + ['']
    for name in MODULES:
        module = importlib.import_module('openmmcoordination.' + name)
        mark = [NOT_RUN_EXAMPLES[name]] if name in NOT_RUN_EXAMPLES else []
        lines += ['## openmmcoordination.%s' % name, ''] + mark + ['```text', _doc(module), '```', '']
        for item in getattr(module, '__all__', []):
            obj = getattr(module, item)
            if getattr(obj, '__module__', '') != module.__name__:
                lines += ['### %s' % item, '', 'Re-exported from `%s`.' % obj.__module__, '']
            elif inspect.isclass(obj):
                lines += _classLines(item, obj)
            elif inspect.isfunction(obj):
                lines += ['### %s%s' % (item, _signature(obj)), '', '```text', _doc(obj), '```', '']
    return '\n'.join(lines).rstrip() + '\n'


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--check', action='store_true', help='only check that the pages are up to date')
    args = parser.parse_args(argv)
    stale = []
    for name, make in [('api-cpp.md', cppPage), ('api-python.md', pythonPage)]:
        path = os.path.join(DOCS, name)
        text = make()
        current = open(path).read() if os.path.exists(path) else None
        if current != text:
            stale.append(name)
            if not args.check:
                with open(path, 'w') as f:
                    f.write(text)
    if args.check and stale:
        print('out of date: %s (run python docs/generate_api.py)' % ', '.join(stale))
        return 1
    print('wrote ' + ', '.join(stale) if stale and not args.check else 'up to date')
    return 0


if __name__ == '__main__':
    sys.exit(main())
