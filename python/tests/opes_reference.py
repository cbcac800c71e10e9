"""OPES_METAD and OPES_METAD_EXPLORE written from Invernizzi and Parrinello, J. Phys. Chem. Lett. 11,
2731 (2020), and PLUMED's documentation of OPES_METAD, independently of openmmcoordination.opes:
plain loops over a list of kernels, the normalization Z summed in full at every update, the bias
evaluated point by point. Fed a sequence of CVs, it gives the bias, Z, rct, neff and the kernels.

    P(s) = sum_k h_k G_k(s) / sum_k w_k,      w_k = exp(V(s_k)/kT)  (explore: h = 1, P over the count)
    Z = (1/N_kernels) sum_k P(c_k)            (over the compressed kernels' centres)
    V(s) = (1 - 1/gamma) kT ln(P(s)/Z + epsilon)     (explore: (gamma - 1) kT ln(...))
    sigma_n = sigma_0 (n_eff (d + 2)/4)^(-1/(4 + d)),   h_n = w_n (sigma_0/sigma_n)^d

The adaptive sigma (SIGMA=ADAPTIVE) as PLUMED 2.10's OPESmetad::update() keeps it: at every step
after the first, the CVs enter a running mean and variance (measure(): Welford's update with tau =
min(count, ADAPTIVE_SIGMA_STRIDE)); no kernel while fewer than ADAPTIVE_SIGMA_STRIDE steps were
counted and none was deposited; a kernel's sigma is sqrt(m2/count (1 - 1/gamma)), the first
estimate's m2 divided by (1 - 1/gamma) once, for good (replay() drives a whole run that way).

Periodic CVs (``domains``: per CV None, or (min, max) of a periodic one such as a torsion from -pi to
pi) as PLUMED's src/opes/OPESmetad.cpp takes them, every difference through Value::difference(a, b):
b - a brought into [-P/2, P/2) by whole periods P = max - min (Tools::pbc of (b - a)/P). In the kernels'
values (evaluateKernel: difference(centre, s)), in the distance to the nearest kernel
(getMergeableKernel: difference(new centre, kernel centre)), in the merge (mergeKernels(k1, k2): k1's
centre first moved to k2.centre + difference(k2.centre, k1.centre), then the weighted mean and variance,
then the centre brought back into the period by bringBackInPbc: mid + difference(mid, c), mid the middle
of the period; in the recursive merge k1 is the kernel of the lower index), and in the adaptive sigma's
Welford update (diff = difference(mean, s); mean += diff/tau; m2 += diff difference(mean, s), the mean
never wrapped). The CVs fed to it are PLUMED's values, in [min, max).
"""

import math

import numpy as np


class ReferenceOPES(object):

    def __init__(self, kT, barrier, biasFactor, sigma=None, epsilon=None, threshold=1.0, cutoff=None, explore=False,
                 adaptiveStride=None, sigmaMin=None, fixedSigma=False, domains=None):
        self.kT, self.explore = kT, explore
        self.domains = domains
        self.gamma = biasFactor
        if explore:
            self.prefactor = biasFactor - 1
        else:
            self.prefactor = 1.0 if math.isinf(biasFactor) else 1 - 1/biasFactor
        self.epsilon = math.exp(-barrier/(self.prefactor*kT)) if epsilon is None else epsilon
        if cutoff is None:
            cutoff = math.sqrt(2*barrier/kT) if explore else math.sqrt(2*barrier/(self.prefactor*kT))
        self.cutoff = cutoff
        self.threshold = threshold
        self.sigma0 = None if sigma is None else np.array(sigma, float)*(math.sqrt(biasFactor) if explore else 1.0)
        self.adaptiveStride = adaptiveStride
        self.sigmaMin = None if sigmaMin is None else np.array(sigmaMin, float)
        self.fixedSigma = fixedSigma
        self.kernels = []                 # [height, centre, sigma]
        self.deposits = []                # (centre, sigma, height, log-weight) of each kernel as deposited
        self.weights = [self.epsilon**self.prefactor]
        self.zed = 1.0
        self.samples = 0
        self.mean = None
        self.m2 = None
        self.first = True

    def difference(self, i, a, b):
        """PLUMED's Value::difference(a, b) of CV i: b - a, for a periodic CV the nearest image."""
        if self.domains is None or self.domains[i] is None:
            return b - a
        low, high = self.domains[i]
        period = high - low
        x = (b - a)/period
        return (x - math.floor(x + 0.5))*period

    def bring_back(self, i, c):
        """PLUMED's Value::bringBackInPbc of CV i."""
        if self.domains is None or self.domains[i] is None:
            return c
        low, high = self.domains[i]
        middle = low + (high - low)/2
        return middle + self.difference(i, middle, c)

    def kernel(self, kernel, s):
        height, center, sigma = kernel
        r2 = 0.0
        for i in range(len(s)):
            r2 += (self.difference(i, center[i], s[i])/sigma[i])**2
        if r2 >= self.cutoff**2:
            return 0.0
        return height*(math.exp(-r2/2) - math.exp(-self.cutoff**2/2))

    def norm(self):
        return float(len(self.weights)) if self.explore else sum(self.weights)

    def probability(self, s):
        return sum(self.kernel(k, s) for k in self.kernels)/self.norm()

    def bias(self, s):
        return self.kT*self.prefactor*math.log(self.probability(s)/self.zed + self.epsilon)

    def measure(self, s):
        """The running mean and variance of the adaptive sigma."""
        s = np.array(s, float)
        if self.mean is None:
            self.mean, self.m2 = np.zeros(len(s)), np.zeros(len(s))
        self.samples += 1
        tau = min(self.samples, self.adaptiveStride)
        self.mean, self.m2 = self.mean.copy(), self.m2.copy()
        for i in range(len(s)):
            delta = self.difference(i, self.mean[i], s[i])
            self.mean[i] += delta/tau
            self.m2[i] += delta*self.difference(i, self.mean[i], s[i])

    def nearest(self, center, skip):
        best, bestDistance = None, self.threshold**2
        for index, (height, c, sigma) in enumerate(self.kernels):
            if index == skip:
                continue
            distance = sum((self.difference(i, center[i], c[i])/sigma[i])**2 for i in range(len(center)))
            if distance < bestDistance:
                best, bestDistance = index, distance
        return best

    def merged(self, a, b):
        """PLUMED's mergeKernels(a, b): b merged into a."""
        h = a[0] + b[0]
        center, sigma = np.zeros(len(a[1])), np.zeros(len(a[1]))
        for i in range(len(a[1])):
            ca = a[1][i]
            if self.domains is not None and self.domains[i] is not None:
                ca = b[1][i] + self.difference(i, b[1][i], ca)        # a's image nearest b's centre
            c = (a[0]*ca + b[0]*b[1][i])/h
            variance = (a[0]*(a[2][i]**2 + ca**2) + b[0]*(b[2][i]**2 + b[1][i]**2))/h - c**2
            center[i], sigma[i] = self.bring_back(i, c), math.sqrt(variance)
        return [h, center, sigma]

    def add(self, height, center, sigma):
        new = [height, np.array(center, float), np.array(sigma, float)]
        index = self.nearest(new[1], None) if self.threshold > 0 else None
        if index is None:
            self.kernels.append(new)
            return
        self.kernels[index] = self.merged(self.kernels[index], new)
        other = self.nearest(self.kernels[index][1], index)
        while other is not None:
            low, high = min(index, other), max(index, other)
            self.kernels[low] = self.merged(self.kernels[low], self.kernels[high])
            del self.kernels[high]
            index = low
            other = self.nearest(self.kernels[index][1], index)

    def update(self, s, extra=0.0):
        """A kernel at s (after the bias there was felt); ``extra``: the energy of PLUMED's EXTRA_BIAS
        there, which enters the weight, exp((V + extra)/kT)."""
        s = np.array(s, float)
        logWeight = (self.bias(s) + extra)/self.kT
        weight = math.exp(logWeight)
        self.weights.append(weight)
        height = 1.0 if self.explore else weight
        d = len(s)
        if self.sigma0 is not None:
            sigma = self.sigma0.copy()
        elif self.explore:
            sigma = np.sqrt(self.m2/self.samples)
        else:
            if self.first:
                self.m2 = self.m2/(1 - self.prefactor)
            sigma = np.sqrt(self.m2/self.samples*(1 - self.prefactor))
        self.first = False
        if not self.fixedSigma:
            size = len(self.weights) if self.explore else self.neff()
            factor = (size*(d + 2)/4)**(-1/(4 + d))
            factors = np.full(d, factor) if self.sigmaMin is None else np.maximum(factor, self.sigmaMin/sigma)
            sigma = sigma*factors
            height /= np.prod(factors)
        self.deposits.append((s, sigma, height, logWeight))
        self.add(height, s, sigma)
        self.zed = sum(self.probability(k[1]) for k in self.kernels)/len(self.kernels)

    def neff(self):
        w = np.array(self.weights)
        return (1 + w.sum())**2/(1 + (w**2).sum())

    def rct(self):
        return self.kT*math.log(sum(self.weights)/len(self.weights))

    def replay(self, cvs, pace):
        """PLUMED's run over the CVs of steps 1, 2, ... (``cvs[k]`` is step k + 1; the first step, 0,
        is skipped as PLUMED's update() skips it): with an adaptive sigma every step is measured; a
        kernel at each multiple of ``pace``, except, adaptive, while fewer than adaptiveStride steps
        were measured and no kernel was deposited. Returns (step, rct, Z, neff, kernels) after each update."""
        updates = []
        for step, s in enumerate(cvs, start=1):
            adaptive = self.sigma0 is None
            if adaptive:
                self.measure(s)
                if self.samples < self.adaptiveStride and len(self.weights) == 1:
                    continue
            if step % pace == 0:
                self.update(s)
                updates.append((step, self.rct(), self.zed, self.neff(), len(self.kernels)))
        return updates
