"""benchmarks/ is a small package without cycles: every module's imports of the others, read with
`ast` (nothing is run, so no OpenMM is needed: `--noconftest`), form a graph without a cycle; no
module imports the driver benchmark.py; every section of its table is a bench_*.py; and the driver
stays a short table of sections with the command line."""

import ast
import os

BENCHMARKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'benchmarks')
DRIVER_MAX_LINES = 250


def read(name):
    with open(os.path.join(BENCHMARKS, name + '.py')) as source:
        return source.read()


def local_modules():
    return sorted(name[:-3] for name in os.listdir(BENCHMARKS) if name.endswith('.py'))


def imports(name, modules):
    """The modules of benchmarks/ that a module imports, anywhere in it (functions included)."""
    found = set()
    for node in ast.walk(ast.parse(read(name))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split('.')[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split('.')[0])
    return found & set(modules)


def cycle(graph):
    """A cycle of the graph {module: modules it imports} as a list of modules, or None."""
    state = {}

    def visit(node, path):
        state[node] = 'open'
        for other in sorted(graph[node]):
            if state.get(other) == 'open':
                return path[path.index(other):] + [other]
            if other not in state:
                found = visit(other, path + [other])
                if found:
                    return found
        state[node] = 'done'
        return None
    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def test_cycle_finder():
    """The check itself finds a cycle where there is one."""
    assert cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == ['a', 'b', 'c', 'a']
    assert cycle({'a': {'b'}, 'b': set(), 'c': {'a', 'b'}}) is None


def test_import_graph_is_acyclic():
    modules = local_modules()
    graph = {name: imports(name, modules) for name in modules}
    assert cycle(graph) is None, 'benchmarks/ imports in a cycle: %s' % ' -> '.join(cycle(graph))
    assert not [name for name in modules if 'benchmark' in graph[name]], 'a module imports the driver benchmark.py'
    # The shared helpers import no other module of benchmarks/.
    assert graph['common'] == set()


def test_driver_is_a_table_of_sections():
    """benchmark.py names each section's module in SECTIONS (read from its source) and stays short."""
    source = read('benchmark')
    table = next(node.value for node in ast.parse(source).body if isinstance(node, ast.Assign)
                 and [target.id for target in node.targets if isinstance(target, ast.Name)] == ['SECTIONS'])
    sections = {key.value: value.id for key, value in zip(table.keys, table.values)}
    assert list(sections) == ['md', 'contacts', 'throughput', 'cutoff', 'latency', 'histogram', 'coldstart', 'cpu']
    for name, module in sections.items():
        assert module == 'bench_' + name and module in local_modules()
        assert 'def section(platform, options):' in read(module), module
    assert len(source.splitlines()) <= DRIVER_MAX_LINES
