"""Pictures with matplotlib (imported only when a plot is made): g(r) with the switching function and
n(r), the coordination number over time, and a free-energy profile.

Each function returns a matplotlib Figure (shown inline in a notebook) and writes it to ``path``
(PNG, or any format matplotlib knows by the extension) when one is given. No pyplot state is used.
"""

import numpy as np

__all__ = ['plotPairDistribution', 'plotCollectiveVariable', 'plotFreeEnergy']


def _figure(width, height, rows=1, heightRatios=None):
    from matplotlib.figure import Figure
    figure = Figure(figsize=(width, height), dpi=120, layout='constrained')
    axes = figure.subplots(rows, 1, sharex=True, gridspec_kw=None if heightRatios is None else {'height_ratios': heightRatios})
    return figure, axes


def _save(figure, path):
    if path is not None:
        figure.savefig(str(path))
    return figure


# The background of the labels drawn on the curves.
_LABEL_BOX = dict(boxstyle='round,pad=0.2', fc='white', ec='none', alpha=0.8)


def _drawSwitchingFunction(top, force, upper):
    """Draw the force's s(r) on a second axis of the g(r) panel, d0 + r0 marked; returns its line."""
    from openmmcoordination.gr import _value
    right = top.twinx()
    rs = np.linspace(0.0, upper, 400)
    switching = np.array([force.evaluateSwitchingFunction(float(x))[0] for x in rs])
    line, = right.plot(rs, switching, color='C1', lw=1.4, ls='--', label='switching function s(r)')
    right.set_ylim(0, 1.05)
    right.set_ylabel('s(r)', color='C1')
    r0, d0 = _value(force.getR0()), _value(force.getD0())
    s0 = force.evaluateSwitchingFunction(d0 + r0)[0]
    right.plot([d0 + r0], [s0], 'o', color='C1', ms=4)
    right.annotate('r0 = %.3f nm' % r0 if d0 == 0 else 'd0 + r0 = %.3f nm' % (d0 + r0), (d0 + r0, s0),
                   textcoords='offset points', xytext=(8, 4), color='C1', fontsize=8, bbox=_LABEL_BOX)
    return line


def _markFirstMinimum(top, bottom, gr, minimum):
    """Mark a distance (nm) in both panels, with n(r) there in the lower one."""
    n = gr.coordinationAt(minimum)
    top.axvline(minimum, color='C3', lw=1.0, ls='-.', label='first minimum of g(r): %.3f nm' % minimum)
    bottom.axvline(minimum, color='C3', lw=1.0, ls='-.')
    bottom.plot([minimum], [n], 'o', color='C3', ms=4)
    bottom.annotate('n(%.3f nm) = %.2f' % (minimum, n), (minimum, n), textcoords='offset points', xytext=(6, 6),
                    color='C3', fontsize=8, bbox=_LABEL_BOX)
    if n > 0:
        bottom.set_ylim(0, 3.0*n)


def plotPairDistribution(gr, force=None, firstMinimum=True, path=None, title=None, maxDistance=None):
    """Plot g(r) (upper panel, left axis), the force's switching function s(r) (upper panel, right
    axis) and the running coordination number n(r) (lower panel), with the first minimum of g(r)
    marked and the range beyond minimum image validity shaded.

    Parameters
    ----------
    gr: PairDistribution
    force: CoordinationForce (optional)
        draws its s(r) and marks r0
    firstMinimum: bool or float
        mark gr.firstMinimum() (True), a given distance in nm, or nothing (False)
    path: str (optional)
        the file to write
    title: str (optional)
    maxDistance: float (optional)
        the upper limit of the r axis (nm); default the histogram's range
    """
    figure, (top, bottom) = _figure(6.4, 5.6, 2, [2, 1])
    r = gr.r
    finite = np.isfinite(gr.g)
    pairList = gr.mode == 'pair list'
    top.plot(r[finite], gr.g[finite], color='C0', lw=1.6, label='p(r)' if pairList else 'g(r)')
    if not pairList:
        top.axhline(1.0, color='0.6', lw=0.8, ls=':')
    top.set_ylabel('p(r) (1/nm)' if pairList else 'g(r)', color='C0')
    top.set_ylim(bottom=0)
    bottom.plot(gr.edges[1:], gr.n, color='C2', lw=1.6)
    bottom.set_ylabel('n(r)' if not pairList else 'pairs within r')
    bottom.set_xlabel('r (nm)')
    bottom.set_ylim(bottom=0)
    upper = gr.edges[-1] if maxDistance is None else maxDistance
    for ax in (top, bottom):
        ax.set_xlim(0, upper)
        ax.grid(alpha=0.3)
        if gr.validMax < upper:
            ax.axvspan(gr.validMax, upper, color='0.85', alpha=0.6, lw=0,
                       label='beyond half the shortest box vector' + (' (shells corrected)' if gr.corrected else ''))
    handles = [] if force is None else [_drawSwitchingFunction(top, force, upper)]
    if firstMinimum is True and not pairList:
        _markFirstMinimum(top, bottom, gr, gr.firstMinimum())
    elif firstMinimum not in (True, False, None):
        _markFirstMinimum(top, bottom, gr, float(firstMinimum))
    lines, labels = top.get_legend_handles_labels()
    top.legend(lines + handles, labels + [h.get_label() for h in handles], loc='upper right', fontsize=8)
    if title is None:
        title = '%s, %d frame%s' % ('pair distance distribution' if pairList else 'radial distribution function',
                                    gr.numFrames, '' if gr.numFrames == 1 else 's')
    top.set_title(title, fontsize=10)
    return _save(figure, path)


def plotCollectiveVariable(times, values, path=None, names=None, title=None, ylabel='coordination number',
                           runningAverage=True):
    """Plot coordination numbers over time. ``times`` in ps; ``values`` one column per CV."""
    times = np.asarray(times, dtype=float)
    values = np.asarray(values, dtype=float).reshape(len(times), -1)
    figure, ax = _figure(6.4, 3.6)
    if names is None:
        names = ['cv'] if values.shape[1] == 1 else ['cv%d' % i for i in range(values.shape[1])]
    for k in range(values.shape[1]):
        ax.plot(times, values[:, k], lw=0.8, color='C%d' % k, alpha=0.8 if runningAverage else 1.0, label=names[k])
        if runningAverage and len(times) >= 10:
            window = max(2, len(times)//20)
            kernel = np.ones(window)/window
            smooth = np.convolve(values[:, k], kernel, mode='valid')
            ax.plot(times[window-1:], smooth, lw=1.8, color='C%d' % k, alpha=1.0,
                    label='%s, running mean over %d frames' % (names[k], window))
    ax.set_xlabel('time (ps)')
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc='best')
    ax.set_title('collective variable over time' if title is None else title, fontsize=10)
    return _save(figure, path)


def plotFreeEnergy(grid, freeEnergy, path=None, sampled=None, references=(), title=None, label='this run',
                   xlabel='coordination number'):
    """Plot a free-energy profile F(cv) in kJ/mol, shifted so its minimum over the sampled range is 0.

    Parameters
    ----------
    grid, freeEnergy: arrays (freeEnergy in kJ/mol, a Quantity is accepted)
    sampled: (low, high) (optional)
        the CV range the run visited; only that part is drawn and used for the shift
    references: list of (grid, freeEnergy, label)
        other profiles drawn the same way (a peer method, an exact profile)
    """
    figure, ax = _figure(6.4, 4.0)

    def prepare(x, f):
        x = np.asarray(x, dtype=float)
        if hasattr(f, 'value_in_unit'):
            from openmm import unit
            f = f.value_in_unit(unit.kilojoules_per_mole)
        f = np.asarray(f, dtype=float)
        keep = np.isfinite(f)
        if sampled is not None:
            keep &= (x >= sampled[0]) & (x <= sampled[1])
        return x[keep], f[keep] - f[keep].min()

    x, f = prepare(grid, freeEnergy)
    ax.plot(x, f, color='C0', lw=1.8, label=label)
    for k, (rg, rf, rl) in enumerate(references):
        rx, ry = prepare(rg, rf)
        ax.plot(rx, ry, color='C%d' % (k+1), lw=1.2, ls='--', label=rl)
    i = int(np.argmin(f))
    ax.plot([x[i]], [f[i]], 'o', color='C3', ms=4)
    ax.annotate('minimum at %.2f' % x[i], (x[i], f[i]), textcoords='offset points', xytext=(6, 6), color='C3', fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel('free energy (kJ/mol)')
    ax.set_ylim(bottom=-0.5)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc='best')
    ax.set_title('free-energy profile' if title is None else title, fontsize=10)
    return _save(figure, path)
