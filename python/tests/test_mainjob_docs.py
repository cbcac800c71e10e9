"""The documentation of the main job and the API: the generated reference pages are up to date with
the header and the docstrings, the links between pages resolve, and the first page maps every
PLUMED keyword."""

import importlib.util
import os
import re

from gr_helpers import REPO

DOCS = os.path.join(REPO, 'docs')


def load_generator():
    spec = importlib.util.spec_from_file_location('generate_api', os.path.join(DOCS, 'generate_api.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_api_pages_are_up_to_date(capsys):
    assert load_generator().main(['--check']) == 0, capsys.readouterr().out


def test_api_pages_cover_the_api():
    cpp = open(os.path.join(DOCS, 'api-cpp.md')).read()
    for method in ['getPairHistogram', 'accumulatePairHistogram', 'setEnergyExpression', 'addTabulatedFunction',
                   'evaluateSwitchingFunction', 'setDefaultDMax', 'getCollectiveVariableValue']:
        assert method in cpp
    python = open(os.path.join(DOCS, 'api-python.md')).read()
    for name in ['PairDistribution', 'PairDistributionReporter', 'CollectiveVariableReporter', 'analyzeTrajectory',
                 'Metadynamics', 'plotPairDistribution', 'plotFreeEnergy', 'addHistogramForce']:
        assert '### ' in python and name in python


def test_links_resolve():
    for name in os.listdir(DOCS):
        if not name.endswith('.md'):
            continue
        text = open(os.path.join(DOCS, name)).read()
        for target in re.findall(r'\]\(([^)#]+\.md)\)', text):
            assert os.path.exists(os.path.join(DOCS, target)), (name, target)


def test_first_page_maps_plumed_keywords():
    text = open(os.path.join(DOCS, 'index.md')).read()
    for keyword in ['GROUPA', 'GROUPB', 'PAIR', 'R_0', 'NN', 'MM', 'D_0', 'D_MAX', 'NOSTRETCH', 'NOPBC', 'NLIST',
                    'RATIONAL', 'EXP', 'GAUSSIAN', 'SMAP', 'CUBIC', 'TANH', 'COSINUS', 'CUSTOM']:
        assert keyword in text, keyword
    assert '(1e-5)^(1/(n - m))' in text  # the default dmax of the short syntax


def test_main_job_command_is_documented():
    tutorial = open(os.path.join(DOCS, 'tutorial.md')).read()
    assert 'python examples/ion_coordination.py' in tutorial
    assert os.path.exists(os.path.join(REPO, 'examples', 'ion_coordination.py'))
