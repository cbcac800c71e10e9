/* Tests of the situations in which a platform may bin particles into cells instead of visiting
 * all pairs: a finite dmax (or a histogram range) with a periodic box. Small and large cutoffs,
 * cutoffs near and beyond half the box, triclinic boxes, particles exactly on cell faces and on
 * the box edges, mostly empty cells, every particle in one cell, a group of one particle. Every
 * case compares the platform under test with the Reference platform (all pairs, exact nearest
 * image) through compareWithReference() of TestCoordinationRandom.h, included before this file. */

#include "CoordinationTestUtilities.h"

/** How far (nm) a pair must stay from a kink of the energy (r = dmax, a tie between two images). */
static const double CELL_KINK_MARGIN = 2e-5;
/** How far (nm) a pair must stay from a histogram bin edge (float distances err by about 1e-6 nm). */
static const double CELL_EDGE_MARGIN = 1e-5;

static Vec3 fromFractional(const Vec3* box, double a, double b, double c) {
    return box[0]*a+box[1]*b+box[2]*c;
}

/** A position in the box's cell or up to 0.3 box vectors outside it (the platforms must wrap it). */
static Vec3 randomInBox(OpenMM_SFMT::SFMT& sfmt, const Vec3* box) {
    return fromFractional(box, 1.6*uniform(sfmt)-0.3, 1.6*uniform(sfmt)-0.3, 1.6*uniform(sfmt)-0.3);
}

static vector<Vec3> randomInBox(OpenMM_SFMT::SFMT& sfmt, const Vec3* box, int numParticles) {
    vector<Vec3> positions;
    for (int i = 0; i < numParticles; i++)
        positions.push_back(randomInBox(sfmt, box));
    return positions;
}

static double halfMinWidth(const Vec3* box) {
    double volume = box[0][0]*box[1][1]*box[2][2];
    Vec3 bc = box[1].cross(box[2]), ca = box[2].cross(box[0]), ab = box[0].cross(box[1]);
    return 0.5*volume/max(sqrt(bc.dot(bc)), max(sqrt(ca.dot(ca)), sqrt(ab.dot(ab))));
}

static void rectangularCellBox(Vec3* box, double x, double y, double z) {
    box[0] = Vec3(x, 0, 0);
    box[1] = Vec3(0, y, 0);
    box[2] = Vec3(0, 0, z);
}

/** A triclinic box in reduced form, half its smallest width about 1.82 nm. */
static void triclinicCellBox(Vec3* box) {
    box[0] = Vec3(4.0, 0, 0);
    box[1] = Vec3(1.2, 4.0, 0);
    box[2] = Vec3(-1.0, 1.3, 4.0);
}

/** A strongly skewed triclinic box, at the limits of the reduced form. */
static void skewedCellBox(Vec3* box) {
    box[0] = Vec3(4.5, 0, 0);
    box[1] = Vec3(-2.2, 4.1, 0);
    box[2] = Vec3(2.2, -2.0, 4.3);
}

/**
 * The nearest-image distance of a displacement, and whether the second nearest image is within
 * margin of it (where platforms may legitimately pick different images).
 */
static double cellImageDistance(Vec3 d, const Vec3* box, double halfWidth, double margin, bool& tie) {
    d -= box[2]*round(d[2]/box[2][2]);
    d -= box[1]*round(d[1]/box[1][1]);
    d -= box[0]*round(d[0]/box[0][0]);
    tie = false;
    double r = sqrt(d.dot(d));
    if (r < halfWidth-margin)
        return r;  // every other image is longer than 2*halfWidth-r
    double best = INFINITY, second = INFINITY;
    for (int a = -1; a <= 1; a++)
        for (int b = -1; b <= 1; b++)
            for (int c = -1; c <= 1; c++) {
                Vec3 image = d+box[0]*a+box[1]*b+box[2]*c;
                double length = sqrt(image.dot(image));
                if (length < best) {
                    second = best;
                    best = length;
                }
                else
                    second = min(second, length);
            }
    tie = (second-best < margin);
    return best;
}

/**
 * Redraw particles (with redraw(i); never the pinned one) until no pair of the force within range
 * of dmax or of the histogram lies within a margin of a kink: r = dmax, a tie between two
 * periodic images, or a bin edge of a histogram of numBins bins up to histogramRange. Near a
 * kink, rounding alone may change which side a pair falls on, and the forces or counts with it;
 * the tests are about the cells, not that.
 */
static void avoidKinks(const CoordinationForce& force, vector<Vec3>& positions, const Vec3* box, int numBins, double histogramRange,
                       const function<Vec3(int)>& redraw, int pinned = -1) {
    double dmax = force.getDMax(), halfWidth = halfMinWidth(box), range = max(isfinite(dmax) ? dmax : 0.0, histogramRange);
    double binWidth = histogramRange/numBins;
    for (int iteration = 0; ; iteration++) {
        vector<int> bad;
        forEachPair(force, [&] (int i, int j) {
            bool tie;
            double r = cellImageDistance(positions[j]-positions[i], box, halfWidth, CELL_KINK_MARGIN, tie);
            if (r > range+CELL_KINK_MARGIN)
                return;
            double edge = binWidth*round(r/binWidth);
            if (tie || fabs(r-dmax) < CELL_KINK_MARGIN || (edge <= histogramRange && fabs(r-edge) < CELL_EDGE_MARGIN))
                bad.push_back(j == pinned ? i : j);
        });
        if (bad.empty())
            return;
        if (iteration == 20)
            throw OpenMMException("avoidKinks: too many pairs near a kink; the test case is badly built");
        for (int i : bad)
            positions[i] = redraw(i);
    }
}

/** A System of unit masses with a periodic box and the force. */
static void cellSystem(System& system, int numParticles, const Vec3* box, CoordinationForce* force) {
    for (int i = 0; i < numParticles; i++)
        system.addParticle(1.0);
    system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
    force->setUsesPeriodicBoundaryConditions(true);
    system.addForce(force);
}

/** The switching function of a case: dmax is the cutoff, r0 a third of it (CUBIC: d0 0.05). */
static void configureCells(CoordinationForce& force, CoordinationForce::SwitchingFunction type, double dmax) {
    force.setSwitchingFunction(type);
    if (type == CoordinationForce::Cubic)
        force.setD0(0.05);
    else
        force.setR0(dmax/3);
    force.setDMax(dmax);
}

/** Groups of a mode over numParticles particles: one group of all; two overlapping groups listed
 * out of order; a pair list of (2k, 2k+1) (near each other, see nearPairs) and random pairs. */
static CoordinationForce* cellForce(CoordinationForce::Mode mode, int numParticles, OpenMM_SFMT::SFMT& sfmt) {
    vector<int> a, b;
    if (mode == CoordinationForce::OneGroup) {
        for (int i = numParticles-1; i >= 0; i--)
            a.push_back(i);
        return new CoordinationForce(a);
    }
    if (mode == CoordinationForce::TwoGroups) {
        for (int i = 0; i < numParticles; i++) {
            if (i%3 != 2)
                a.push_back(i);
            if (i%3 != 0)
                b.insert(b.begin(), i);
        }
        return new CoordinationForce(a, b);
    }
    for (int k = 0; 2*k+1 < numParticles; k++) {
        a.push_back(2*k);
        b.push_back(2*k+1);
        int i = (int) (uniform(sfmt)*numParticles), j = (int) (uniform(sfmt)*(numParticles-1));
        a.push_back(i);
        b.push_back(j < i ? j : j+1);
    }
    return new CoordinationForce(a, b, true);
}

/** Move every odd particle to within about 0.4 of the cutoff of the even one before it. */
static void nearPairs(vector<Vec3>& positions, double dmax, OpenMM_SFMT::SFMT& sfmt) {
    for (int k = 0; 2*k+1 < positions.size(); k++)
        positions[2*k+1] = positions[2*k]+(randomVector(sfmt, 0.8*dmax)-Vec3(1, 1, 1)*(0.4*dmax));
}

struct CellCase {
    CoordinationForce::Mode mode;
    CoordinationForce::SwitchingFunction type;
    double dmax;
};

/** Random particles in a box (some outside it), one case after another, each against Reference. */
static void compareRandomCells(const Vec3* box, int numParticles, const vector<CellCase>& cases, int seed) {
    for (int c = 0; c < cases.size(); c++) {
        OpenMM_SFMT::SFMT sfmt;
        OpenMM_SFMT::init_gen_rand(seed+c, sfmt);
        System system;
        CoordinationForce* force = cellForce(cases[c].mode, numParticles, sfmt);
        configureCells(*force, cases[c].type, cases[c].dmax);
        cellSystem(system, numParticles, box, force);
        vector<Vec3> positions = randomInBox(sfmt, box, numParticles);
        if (cases[c].mode == CoordinationForce::PairList)
            nearPairs(positions, cases[c].dmax, sfmt);
        avoidKinks(*force, positions, box, 64, cases[c].dmax, [&] (int i) { return randomInBox(sfmt, box); });
        compareWithReference(system, *force, positions, box, cases[c].dmax);
    }
}

void testCellsSmallAndLargeCutoffs() {
    typedef CoordinationForce F;
    Vec3 box[3];
    rectangularCellBox(box, 4.4, 4.7, 4.1);
    compareRandomCells(box, 1000, {{F::OneGroup, F::Rational, 0.3}, {F::TwoGroups, F::Rational, 0.6}, {F::OneGroup, F::Gaussian, 1.0},
                                   {F::TwoGroups, F::Gaussian, 0.3}, {F::OneGroup, F::Cubic, 0.6}, {F::TwoGroups, F::Cubic, 1.0},
                                   {F::PairList, F::Rational, 0.6}}, 10);
}

void testCellsTriclinic() {
    typedef CoordinationForce F;
    Vec3 box[3];
    triclinicCellBox(box);
    compareRandomCells(box, 800, {{F::OneGroup, F::Rational, 0.3}, {F::TwoGroups, F::Gaussian, 0.6}, {F::OneGroup, F::Cubic, 1.0}}, 20);
    skewedCellBox(box);
    compareRandomCells(box, 800, {{F::OneGroup, F::Rational, 0.6}, {F::TwoGroups, F::Rational, 1.0}, {F::PairList, F::Gaussian, 0.3}}, 30);
}

void testCellsNearHalfBox() {
    // 0.45 and 0.499 of the smallest width are below half the box but too large for more than two
    // cells per width; 0.6 of it (triclinic) is beyond half the box, where images must be searched.
    typedef CoordinationForce F;
    Vec3 box[3];
    rectangularCellBox(box, 4.4, 4.7, 4.1);
    double w = 2*halfMinWidth(box);
    compareRandomCells(box, 600, {{F::OneGroup, F::Rational, 0.45*w}, {F::TwoGroups, F::Gaussian, 0.499*w}}, 40);
    triclinicCellBox(box);
    w = 2*halfMinWidth(box);
    compareRandomCells(box, 600, {{F::TwoGroups, F::Rational, 0.45*w}, {F::OneGroup, F::Gaussian, 0.499*w},
                                  {F::OneGroup, F::Rational, 0.6*w}, {F::TwoGroups, F::Cubic, 0.6*w}}, 50);
}

/**
 * A coordinate of a particle on a cell face: a fraction k/n of the box (n = 3..12, so the faces
 * of every grid of up to 12 cells), exactly 0, exactly the edge, or the doubles just below them,
 * moved by -1, 0 or 1 whole box lengths; half the time a random fraction instead.
 */
static double faceFraction(OpenMM_SFMT::SFMT& sfmt, bool& onFace) {
    onFace = (uniform(sfmt) < 0.5);
    if (!onFace)
        return uniform(sfmt);
    int kind = (int) (uniform(sfmt)*6);
    if (kind == 0)
        return 0.0;
    if (kind == 1)
        return 1.0;
    if (kind == 2)
        return nextafter(0.0, -1.0);
    if (kind == 3)
        return nextafter(1.0, 0.0);
    int n = 3+(int) (uniform(sfmt)*10);
    return ((int) (uniform(sfmt)*(n+1)))/(double) n;
}

/** A particle with each coordinate on a face, exactly for a rectangular box (k*(L/n) + m*L). */
static Vec3 facePosition(OpenMM_SFMT::SFMT& sfmt, const Vec3* box) {
    bool rectangular = (box[1][0] == 0 && box[2][0] == 0 && box[2][1] == 0);
    double f[3];
    Vec3 p;
    for (int k = 0; k < 3; k++) {
        bool onFace;
        f[k] = faceFraction(sfmt, onFace);
        double shift = (onFace ? floor(3*uniform(sfmt))-1 : 0.0);
        if (rectangular)
            p[k] = f[k]*box[k][k]+shift*box[k][k];
        else
            f[k] += shift;
    }
    return (rectangular ? p : fromFractional(box, f[0], f[1], f[2]));
}

void testCellsParticlesOnFaces() {
    typedef CoordinationForce F;
    vector<CellCase> cases = {{F::OneGroup, F::Rational, 0.6}, {F::TwoGroups, F::Gaussian, 1.0}, {F::OneGroup, F::Cubic, 0.45}};
    for (int b = 0; b < 2; b++) {
        Vec3 box[3];
        if (b == 0)
            rectangularCellBox(box, 4.37, 4.61, 4.13);
        else
            triclinicCellBox(box);
        for (int c = 0; c < cases.size(); c++) {
            OpenMM_SFMT::SFMT sfmt;
            OpenMM_SFMT::init_gen_rand(60+10*b+c, sfmt);
            const int numParticles = 800;
            System system;
            CoordinationForce* force = cellForce(cases[c].mode, numParticles, sfmt);
            configureCells(*force, cases[c].type, cases[c].dmax);
            cellSystem(system, numParticles, box, force);
            vector<Vec3> positions;
            for (int i = 0; i < numParticles; i++)
                positions.push_back(facePosition(sfmt, box));
            // Eight particles at the eight corners of the box: images of one point, at r = 0 from each other.
            for (int i = 0; i < 8; i++)
                positions[i] = fromFractional(box, i%2, (i/2)%2, i/4);
            avoidKinks(*force, positions, box, 64, cases[c].dmax, [&] (int i) { return facePosition(sfmt, box); });
            compareWithReference(system, *force, positions, box, cases[c].dmax);
        }
    }
}

void testCellsMostlyEmpty() {
    // An 8 nm box: 600 particles in a 1 nm cube at a corner (or around the origin, across the
    // faces), 12 anywhere else.
    typedef CoordinationForce F;
    Vec3 box[3];
    rectangularCellBox(box, 8.0, 8.0, 8.0);
    const int numParticles = 612;
    for (int c = 0; c < 3; c++) {
        OpenMM_SFMT::SFMT sfmt;
        OpenMM_SFMT::init_gen_rand(80+c, sfmt);
        Vec3 corner = (c == 0 ? Vec3() : Vec3(-0.5, -0.5, -0.5));
        auto draw = [&] (int i) { return i < 600 ? corner+randomVector(sfmt, 1.0) : randomVector(sfmt, 8.0); };
        System system;
        CoordinationForce* force;
        if (c == 2) {
            // The few far particles against the crowded corner.
            vector<int> a, b;
            for (int i = 0; i < numParticles; i++)
                (i >= 590 ? a : b).push_back(i);
            force = new CoordinationForce(a, b);
        }
        else
            force = cellForce(c == 0 ? F::OneGroup : F::TwoGroups, numParticles, sfmt);
        configureCells(*force, c == 1 ? F::Gaussian : F::Rational, c == 2 ? 1.0 : 0.6);
        cellSystem(system, numParticles, box, force);
        vector<Vec3> positions;
        for (int i = 0; i < numParticles; i++)
            positions.push_back(draw(i));
        avoidKinks(*force, positions, box, 64, force->getDMax(), draw);
        compareWithReference(system, *force, positions, box, force->getDMax());
    }
}

void testCellsAllInOneCell() {
    // 300 particles in a 0.4 nm cube, dmax 1 nm, a 5 nm box; once across the box's corner.
    typedef CoordinationForce F;
    Vec3 box[3];
    rectangularCellBox(box, 5.0, 5.0, 5.0);
    for (int c = 0; c < 3; c++) {
        OpenMM_SFMT::SFMT sfmt;
        OpenMM_SFMT::init_gen_rand(90+c, sfmt);
        if (c == 2)
            triclinicCellBox(box);
        Vec3 corner = (c == 1 ? Vec3(-0.2, -0.2, -0.2) : Vec3(2.1, 1.3, 3.4));
        auto draw = [&] (int i) { return corner+randomVector(sfmt, 0.4); };
        const int numParticles = 300;
        System system;
        CoordinationForce* force = cellForce(c == 1 ? F::TwoGroups : F::OneGroup, numParticles, sfmt);
        configureCells(*force, c == 1 ? F::Cubic : F::Rational, 1.0);
        cellSystem(system, numParticles, box, force);
        vector<Vec3> positions;
        for (int i = 0; i < numParticles; i++)
            positions.push_back(draw(i));
        avoidKinks(*force, positions, box, 64, 1.0, draw);
        compareWithReference(system, *force, positions, box, 1.0);
    }
}

void testCellsGroupOfOne() {
    // One particle against 2000 (itself included: that pair is skipped), and 2000 against one;
    // the single particle at the origin (a corner of every cell grid) or anywhere, a few
    // neighbors placed around it through the faces.
    typedef CoordinationForce F;
    Vec3 box[3];
    for (int c = 0; c < 4; c++) {
        if (c < 2)
            rectangularCellBox(box, 4.5, 4.5, 4.5);
        else
            triclinicCellBox(box);
        OpenMM_SFMT::SFMT sfmt;
        OpenMM_SFMT::init_gen_rand(100+c, sfmt);
        const int numParticles = 2000, single = (c%2 == 0 ? 0 : 1234);
        vector<int> one = {single}, all;
        for (int i = numParticles-1; i >= 0; i--)
            all.push_back(i);
        CoordinationForce* force = (c%2 == 0 ? new CoordinationForce(one, all) : new CoordinationForce(all, one));
        configureCells(*force, c < 2 ? F::Rational : F::Gaussian, 0.6);
        System system;
        cellSystem(system, numParticles, box, force);
        Vec3 center = (c%2 == 0 ? Vec3() : randomInBox(sfmt, box));
        auto draw = [&] (int i) { return i < 20 ? center+randomVector(sfmt, 0.8)-Vec3(0.4, 0.4, 0.4) : randomInBox(sfmt, box); };
        vector<Vec3> positions;
        for (int i = 0; i < numParticles; i++)
            positions.push_back(i == single ? center : draw(i));
        avoidKinks(*force, positions, box, 64, 0.6, draw, single);
        compareWithReference(system, *force, positions, box, 0.6);
    }
}

/** Histograms (one frame, and two frames accumulated) against the Reference platform. */
static void compareHistograms(System& system, CoordinationForce& force, const vector<Vec3>& positions, const vector<Vec3>& positions2,
                              const Vec3* box, int numBins, double maxDistance) {
    VerletIntegrator integrator(0.001), referenceIntegrator(0.001);
    Context context(system, integrator, platform, properties);
    Context reference(system, referenceIntegrator, referencePlatform());
    for (Context* c : {&context, &reference}) {
        c->setPeriodicBoxVectors(box[0], box[1], box[2]);
        for (const vector<Vec3>* frame : {&positions, &positions2}) {
            c->setPositions(*frame);
            force.accumulatePairHistogram(*c, numBins, maxDistance);
        }
    }
    assertHistogramsEqual(force.getAccumulatedPairHistogram(reference), force.getAccumulatedPairHistogram(context));
    ASSERT_EQUAL(2, force.getNumAccumulatedFrames(context));
    assertHistogramsEqual(force.getPairHistogram(reference, numBins, maxDistance), force.getPairHistogram(context, numBins, maxDistance));
}

void testCellsHistogram() {
    // maxDistance 1 nm in a 5 nm box (cells), and close to half the box (rectangular and
    // triclinic), in every mode; the force's own dmax is infinite.
    typedef CoordinationForce F;
    struct HistogramCase {
        bool triclinic;
        F::Mode mode;
        double fraction;  // of the smallest box width; 0: 1 nm
    };
    vector<HistogramCase> cases = {{false, F::OneGroup, 0}, {false, F::TwoGroups, 0}, {false, F::PairList, 0},
                                   {false, F::OneGroup, 0.499}, {true, F::TwoGroups, 0.45}, {true, F::OneGroup, 0.499}};
    for (int c = 0; c < cases.size(); c++) {
        OpenMM_SFMT::SFMT sfmt;
        OpenMM_SFMT::init_gen_rand(110+c, sfmt);
        Vec3 box[3];
        if (cases[c].triclinic)
            triclinicCellBox(box);
        else
            rectangularCellBox(box, 5.0, 5.0, 5.0);
        double maxDistance = (cases[c].fraction == 0 ? 1.0 : cases[c].fraction*2*halfMinWidth(box));
        // Fewer particles with the larger range: few enough pairs near the bin edges to move away.
        const int numParticles = (cases[c].fraction == 0 ? 1200 : 500), numBins = 100;
        System system;
        CoordinationForce* force = cellForce(cases[c].mode, numParticles, sfmt);
        force->setDMax(INFINITY);
        cellSystem(system, numParticles, box, force);
        vector<Vec3> frames[2];
        for (vector<Vec3>& positions : frames) {
            positions = randomInBox(sfmt, box, numParticles);
            if (cases[c].mode == F::PairList)
                nearPairs(positions, maxDistance, sfmt);
            avoidKinks(*force, positions, box, numBins, maxDistance, [&] (int i) { return randomInBox(sfmt, box); });
        }
        compareHistograms(system, *force, frames[0], frames[1], box, numBins, maxDistance);
    }
}

void testForcesOnlyAgainstReference() {
    // A restraint on the CV (the chain rule through dE/dcv), forces without energy (as in an MD
    // step), then energy alone, then both: all pairs (two groups, no box), one group with a cutoff
    // (neighbour lists over cells with few bins: a forced grid of 7^3 cells, which the binning's
    // last block scans), two groups over cells with many bins (over 4096, scanned by several
    // blocks; lists off), with home runs and with chunks, a pair list in a box, and two groups
    // that share particles on neighbour lists of particles, each over three frames in a row
    // against Reference. Forces alone take the CV from the sum the pair kernel's blocks
    // accumulated. gpu_suite.sh's stress stage runs this test (and testBiasForcesOnly) in many
    // processes at once under CUDA MPS, where an ordering error between kernels shows. The
    // switches (CUDA's tuning, CudaCoordinationTuning) are ignored by the other platforms.
    typedef CoordinationForce F;
    struct ForcesOnlyCase {
        F::Mode mode;
        int numParticles;
        double boxSize, dmax;  // boxSize 0: no box
        string grid;           // COORDINATION_CELL_GRID
        string neighborList;   // COORDINATION_NEIGHBOR_LIST
        string listKind;       // COORDINATION_LIST_KIND
    };
    vector<ForcesOnlyCase> cases = {{F::TwoGroups, 400, 0.0, INFINITY, "", "", ""}, {F::OneGroup, 1000, 4.4, 0.6, "1,1,1,1", "", ""},
                                    {F::TwoGroups, 3000, 6.0, 0.3, "4,1,1,1", "0", ""}, {F::OneGroup, 1000, 4.4, 0.6, "2,1,1,0", "", ""},
                                    {F::TwoGroups, 3000, 6.0, 0.3, "4,1,1,0", "0", ""}, {F::PairList, 2000, 5.0, 0.8, "", "", ""},
                                    {F::TwoGroups, 1500, 4.4, 0.6, "", "", "particles"}};
    for (int c = 0; c < cases.size(); c++) {
        ScopedEnvironment grid("COORDINATION_CELL_GRID", cases[c].grid), lists("COORDINATION_NEIGHBOR_LIST", cases[c].neighborList),
                kind("COORDINATION_LIST_KIND", cases[c].listKind);
        OpenMM_SFMT::SFMT sfmt;
        OpenMM_SFMT::init_gen_rand(130+c, sfmt);
        Vec3 box[3];
        rectangularCellBox(box, cases[c].boxSize, cases[c].boxSize, cases[c].boxSize);
        System system;
        CoordinationForce* force = cellForce(cases[c].mode, cases[c].numParticles, sfmt);
        force->setR0(0.1);
        force->setDMax(cases[c].dmax);
        force->setEnergyExpression("0.5*k*(cv-cv0)^2");
        force->addGlobalParameter("k", 0.05);
        force->addGlobalParameter("cv0", 1.0);
        if (cases[c].boxSize > 0)
            cellSystem(system, cases[c].numParticles, box, force);
        else {
            for (int i = 0; i < cases[c].numParticles; i++)
                system.addParticle(1.0);
            system.addForce(force);
        }
        VerletIntegrator integrator(0.001), referenceIntegrator(0.001);
        Context context(system, integrator, platform, properties);
        Context reference(system, referenceIntegrator, referencePlatform());
        for (int frame = 0; frame < 3; frame++) {
            vector<Vec3> positions;
            if (cases[c].boxSize == 0)
                positions = randomPositions(cases[c].numParticles, 3.0, 140+3*c+frame);
            else {
                positions = randomInBox(sfmt, box, cases[c].numParticles);
                if (cases[c].mode == F::PairList)
                    nearPairs(positions, cases[c].dmax, sfmt);
                avoidKinks(*force, positions, box, 64, cases[c].dmax, [&] (int i) { return randomInBox(sfmt, box); });
            }
            assertForcesOnlyAgree(context, reference, positions, "case "+to_string(c)+" frame "+to_string(frame));
        }
    }
}

void testHomeListsAgainstReference() {
    // Lists of homes for one group (COORDINATION_LIST_KIND=homes, a skin of 0.2 nm; other platforms
    // ignore both), in a rectangular and a triclinic box, with home runs and with chunks, forces
    // straight to the atoms and by sorted index. Frames: a build, two small moves of every
    // particle that keep the lists, 30 particles moved anywhere in or out of the box (a rebuild),
    // a small move again, and 100 particles shifted by box vectors; each against Reference.
    typedef CoordinationForce F;
    struct HomeListCase {
        bool triclinic;
        string grid, sortedGradient;
    };
    vector<HomeListCase> cases = {{false, "1,1,1,1", "0"}, {false, "2,1,1,0", "1"}, {true, "1,1,1,1", "1"}, {true, "1,1,1,0", "0"}};
    ScopedEnvironment kind("COORDINATION_LIST_KIND", "homes"), skin("COORDINATION_NEIGHBOR_SKIN", "0.2");
    const int numParticles = 1200;
    const double dmax = 0.6;
    for (int c = 0; c < cases.size(); c++) {
        ScopedEnvironment grid("COORDINATION_CELL_GRID", cases[c].grid), sorted("COORDINATION_SORTED_GRADIENT", cases[c].sortedGradient);
        OpenMM_SFMT::SFMT sfmt;
        OpenMM_SFMT::init_gen_rand(170+c, sfmt);
        Vec3 box[3];
        if (cases[c].triclinic)
            triclinicCellBox(box);
        else
            rectangularCellBox(box, 4.4, 4.0, 3.6);
        System system;
        CoordinationForce* force = cellForce(F::OneGroup, numParticles, sfmt);
        configureCells(*force, F::Rational, dmax);
        cellSystem(system, numParticles, box, force);
        VerletIntegrator integrator(0.001), referenceIntegrator(0.001);
        Context context(system, integrator, platform, properties);
        Context reference(system, referenceIntegrator, referencePlatform());
        vector<Vec3> positions = randomInBox(sfmt, box, numParticles);
        auto nudge = [&] (int i) { return positions[i]+randomVector(sfmt, 0.04)-Vec3(0.02, 0.02, 0.02); };
        for (int frame = 0; frame < 6; frame++) {
            for (int i = 0; i < numParticles; i++) {
                if (frame == 1 || frame == 2 || frame == 4)
                    positions[i] = nudge(i);
                if (frame == 3 && i%40 == 0)
                    positions[i] = randomInBox(sfmt, box);
                if (frame == 5 && i%12 == 0)
                    positions[i] += box[i%3]*(i%2 == 0 ? 1.0 : -2.0);
            }
            avoidKinks(*force, positions, box, 64, dmax, nudge);
            context.setPositions(positions);
            reference.setPositions(positions);
            State expected = reference.getState(State::Energy | State::Forces);
            State state = context.getState(State::Energy | State::Forces);
            ASSERT(expected.getPotentialEnergy() > 100.0);
            ASSERT_EQUAL_TOL(expected.getPotentialEnergy(), state.getPotentialEnergy(), tolerance);
            assertForcesEqual(expected.getForces(), state.getForces(), forceTolerance());
        }
    }
}

void runCellTests() {
    RUN_TEST(testCellsSmallAndLargeCutoffs);
    RUN_TEST(testCellsTriclinic);
    RUN_TEST(testCellsNearHalfBox);
    RUN_TEST(testCellsParticlesOnFaces);
    RUN_TEST(testCellsMostlyEmpty);
    RUN_TEST(testCellsAllInOneCell);
    RUN_TEST(testCellsGroupOfOne);
    RUN_TEST(testCellsHistogram);
    RUN_TEST(testForcesOnlyAgainstReference);
    RUN_TEST(testHomeListsAgainstReference);
}
