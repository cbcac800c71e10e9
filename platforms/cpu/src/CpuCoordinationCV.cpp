#include "CpuCoordinationCV.h"
#include "CpuPlatform.h"
#include <algorithm>
#include <cmath>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

/** Below this many pairs per entry of the groups, cells cost more to build than they save. */
static const double MinPairsPerEntryForCells = 32.0;
/** Below this many pairs (without cells), waking the thread pool costs more than it saves. */
static const double MinPairsForThreads = 20000.0;

CpuCoordinationCV::CpuCoordinationCV(const CoordinationForce& force) : ReferenceCoordinationCV(force), threads(NULL) {
    particles = groupA;
    particles.insert(particles.end(), groupB.begin(), groupB.end());
    sort(particles.begin(), particles.end());
    particles.erase(unique(particles.begin(), particles.end()), particles.end());
    auto slots = [&] (const vector<int>& group) {
        vector<int> result;
        for (int i : group)
            result.push_back((int) (lower_bound(particles.begin(), particles.end(), i)-particles.begin()));
        return result;
    };
    slotA = slots(groupA);
    slotB = (mode == CoordinationForce::OneGroup ? slotA : slots(groupB));
}

void CpuCoordinationCV::prepare(ContextImpl& context) {
    ReferenceCoordinationCV::prepare(context);
    threads = &CpuPlatform::getPlatformData(context).threads;
}

bool CpuCoordinationCV::buildCells(const vector<Vec3>& pos, double cutoff) const {
    if (!isfinite(cutoff) || mode == CoordinationForce::PairList)
        return false;
    const vector<int>& other = (mode == CoordinationForce::OneGroup ? groupA : groupB);
    double numA = groupA.size(), numB = other.size();
    double pairs = (mode == CoordinationForce::OneGroup ? 0.5*numA*numA : numA*numB);
    if (pairs < MinPairsPerEntryForCells*(numA+numB))
        return false;
    vector<Vec3> points;
    points.reserve(other.size());
    for (int i : other)
        points.push_back(pos[i]);
    if (!cells.build(points, cutoff, periodic ? box : NULL))
        return false;
    if (mode == CoordinationForce::TwoGroups) {
        imagesA.resize(groupA.size());
        cellsA.resize(groupA.size());
        for (int a = 0; a < groupA.size(); a++)
            cellsA[a] = cells.locate(pos[groupA[a]], imagesA[a]);
    }
    return true;
}

int CpuCoordinationCV::numShares(bool useCells) const {
    double numA = groupA.size(), numB = (mode == CoordinationForce::OneGroup ? numA : groupB.size());
    double pairs = (mode == CoordinationForce::PairList ? numA : mode == CoordinationForce::OneGroup ? 0.5*numA*numA : numA*numB);
    return (useCells || pairs >= MinPairsForThreads ? threads->getNumThreads() : 1);
}

template <class F>
void CpuCoordinationCV::runShares(int shares, F f) const {
    if (shares == 1)
        f(0);
    else {
        threads->execute([&] (ThreadPool& pool, int thread) {
            f(thread);
        });
        threads->waitForThreads();
    }
}

template <class F>
void CpuCoordinationCV::forThreadPairs(int thread, int numThreads, const vector<Vec3>& pos, bool useCells, F f) const {
    int numA = groupA.size();
    if (mode == CoordinationForce::PairList) {
        for (int k = (int) ((long long) numA*thread/numThreads); k < (long long) numA*(thread+1)/numThreads; k++) {
            double r2;
            Vec3 d = squaredDisplacement(pos, groupA[k], groupB[k], r2);
            f(k, k, k, d, r2);
        }
    }
    else if (!useCells && mode == CoordinationForce::OneGroup) {
        // Rows taken in turn by the threads, so that the long and the short ones are shared out.
        for (int a = thread; a < numA; a += numThreads)
            for (int b = a+1; b < numA; b++) {
                double r2;
                Vec3 d = squaredDisplacement(pos, groupA[a], groupA[b], r2);
                f(a, b, 0, d, r2);
            }
    }
    else if (!useCells) {
        // The pairs (a, b) numbered a*numB+b, an equal range of them a thread.
        long long numB = groupB.size(), total = numA*numB;
        long long first = total*thread/numThreads, last = total*(thread+1)/numThreads;
        for (long long p = first; p < last; ) {
            int a = (int) (p/numB), i = groupA[a];
            long long rowEnd = min(last, (a+1)*numB);
            for (int b = (int) (p%numB); p < rowEnd; p++, b++)
                if (i != groupB[b]) {
                    double r2;
                    Vec3 d = squaredDisplacement(pos, i, groupB[b], r2);
                    f(a, b, 0, d, r2);
                }
        }
    }
    else {
        const vector<int>& begin = cells.getBegin();
        const vector<int>& order = cells.getOrder();
        const vector<Vec3>& images = cells.getImages();
        if (mode == CoordinationForce::OneGroup) {
            // Each pair of cells once: a cell with itself and with the neighbors after it.
            auto pair = [&] (int e, int n, const Vec3& d) {
                int a = order[e], b = order[n];
                if (a < b)
                    f(a, b, 0, d, d.dot(d));
                else
                    f(b, a, 0, -d, d.dot(d));
            };
            for (int c = thread; c < cells.getNumCells(); c += numThreads) {
                for (int e = begin[c]; e < begin[c+1]; e++)
                    for (int n = e+1; n < begin[c+1]; n++)
                        pair(e, n, images[n]-images[e]);
                cells.forEachNeighbor(c, true, [&] (int neighbor, const Vec3& shift) {
                    for (int e = begin[c]; e < begin[c+1]; e++) {
                        Vec3 image = images[e]-shift;
                        for (int n = begin[neighbor]; n < begin[neighbor+1]; n++)
                            pair(e, n, images[n]-image);
                    }
                });
            }
        }
        else {
            for (int a = (int) ((long long) numA*thread/numThreads); a < (long long) numA*(thread+1)/numThreads; a++)
                cells.forEachNeighbor(cellsA[a], false, [&] (int neighbor, const Vec3& shift) {
                    Vec3 image = imagesA[a]-shift;
                    for (int n = begin[neighbor]; n < begin[neighbor+1]; n++) {
                        int b = order[n];
                        if (groupA[a] != groupB[b]) {
                            Vec3 d = images[n]-image;
                            f(a, b, 0, d, d.dot(d));
                        }
                    }
                });
        }
    }
}

double CpuCoordinationCV::compute(const vector<Vec3>& pos, vector<Vec3>* gradient) const {
    if (particleFunction)
        return computeParticleFunction(pos, gradient);
    double cutoff = switching->getDMax(), cutoff2 = cutoff*cutoff;
    bool useCells = buildCells(pos, cutoff);
    int shares = numShares(useCells);
    threadSums.assign(shares, 0.0);
    threadGradients.resize(shares);
    runShares(shares, [&] (int share) {
        vector<Vec3>* g = NULL;
        if (gradient != NULL) {
            g = &threadGradients[share];
            g->assign(particles.size(), Vec3());
        }
        double sum = 0.0;
        forThreadPairs(share, shares, pos, useCells, [&] (int a, int b, int k, const Vec3& d, double r2) {
            if (r2 > cutoff2)
                return;
            double r = sqrt(r2), dsdr;
            sum += switching->evaluate(r, pairValues(k), dsdr);
            if (g != NULL && dsdr != 0.0) {
                Vec3 v = d*(dsdr/r);
                (*g)[slotB[b]] += v;
                (*g)[slotA[a]] -= v;
            }
        });
        threadSums[share] = sum;
    });
    double cv = 0.0;
    for (double sum : threadSums)
        cv += sum;
    if (gradient != NULL)
        addThreadGradients(shares, *gradient);
    return cv;
}

void CpuCoordinationCV::addThreadGradients(int shares, vector<Vec3>& gradient) const {
    // Each particle's terms added in share order, the particles shared out among the threads.
    int numSlots = particles.size();
    runShares(shares, [&] (int share) {
        for (int s = (int) ((long long) numSlots*share/shares); s < (long long) numSlots*(share+1)/shares; s++) {
            Vec3 total;
            for (int t = 0; t < shares; t++)
                total += threadGradients[t][s];
            gradient[particles[s]] += total;
        }
    });
}

vector<double> CpuCoordinationCV::computeCoordinationNumbers(const vector<Vec3>& pos) const {
    double cutoff = switching->getDMax(), cutoff2 = cutoff*cutoff;
    bool useCells = buildCells(pos, cutoff);
    int shares = numShares(useCells), numA = groupA.size();
    bool both = (mode == CoordinationForce::OneGroup);
    threadNumbers.resize(shares);
    runShares(shares, [&] (int share) {
        vector<double>& c = threadNumbers[share];
        c.assign(numA, 0.0);
        forThreadPairs(share, shares, pos, useCells, [&] (int a, int b, int k, const Vec3& d, double r2) {
            if (r2 > cutoff2)
                return;
            double dsdr;
            double s = pairTerm(sqrt(r2), dsdr);
            c[a] += s;
            if (both)
                c[b] += s;
        });
    });
    vector<double> c(numA, 0.0);
    for (int t = 0; t < shares; t++)
        for (int a = 0; a < numA; a++)
            c[a] += threadNumbers[t][a];
    return c;
}

double CpuCoordinationCV::computeParticleFunction(const vector<Vec3>& pos, vector<Vec3>* gradient) const {
    vector<double> dFdc;
    double value = particleFunction->evaluate(computeCoordinationNumbers(pos), dFdc);
    if (gradient == NULL)
        return value;
    double cutoff = switching->getDMax(), cutoff2 = cutoff*cutoff;
    bool useCells = buildCells(pos, cutoff);
    int shares = numShares(useCells);
    bool both = (mode == CoordinationForce::OneGroup);
    threadGradients.resize(shares);
    runShares(shares, [&] (int share) {
        vector<Vec3>& g = threadGradients[share];
        g.assign(particles.size(), Vec3());
        forThreadPairs(share, shares, pos, useCells, [&] (int a, int b, int k, const Vec3& d, double r2) {
            if (r2 > cutoff2)
                return;
            double r = sqrt(r2), dsdr;
            pairTerm(r, dsdr);
            double weight = dFdc[a]+(both ? dFdc[b] : 0.0);
            if (dsdr != 0.0 && weight != 0.0) {
                Vec3 v = d*(weight*dsdr/r);
                g[slotB[b]] += v;
                g[slotA[a]] -= v;
            }
        });
    });
    addThreadGradients(shares, *gradient);
    return value;
}

vector<long long> CpuCoordinationCV::computeHistogram(const vector<Vec3>& pos, int numBins, double maxDistance) const {
    bool useCells = buildCells(pos, maxDistance);
    int shares = numShares(useCells);
    threadCounts.resize(shares);
    double binWidth = maxDistance/numBins, limit2 = maxDistance*maxDistance*(1.0+1e-9);
    runShares(shares, [&] (int share) {
        vector<long long>& counts = threadCounts[share];
        counts.assign(numBins, 0);
        forThreadPairs(share, shares, pos, useCells, [&] (int a, int b, int k, const Vec3& d, double r2) {
            if (r2 >= limit2)
                return;
            // The distance as the Reference platform computes it, so that a pair falls in the same bin.
            double r;
            displacement(pos, groupA[a], second(b), r);
            if (r < maxDistance)
                counts[min(numBins-1, (int) (r/binWidth))]++;
        });
    });
    vector<long long> counts(numBins, 0);
    for (int t = 0; t < shares; t++)
        for (int i = 0; i < numBins; i++)
            counts[i] += threadCounts[t][i];
    return counts;
}
