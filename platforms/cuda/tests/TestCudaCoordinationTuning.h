/* Tests of the CUDA tuning switches (CudaCoordinationTuning), included by the CUDA test main after
 * the shared test body: each switch changes the path the kernel takes (as
 * CudaCalcCoordinationForceKernel::describeLastEvaluation() reports it) and keeps energy, forces,
 * CV and histogram equal to Reference (compareWithReference() of the shared body); a value
 * outside a switch's range is an OpenMMException naming the variable and the value. */
#include "CudaCoordinationKernels.h"
#include "internal/CoordinationForceImpl.h"
#include "openmm/internal/ContextImpl.h"

/** Reaches a force's implementation in a Context (Force::getImplInContext() is protected). */
struct ForceImplAccess : public CoordinationForce {
    static CoordinationForceImpl& get(const CoordinationForce& force, Context& context) {
        ForceImpl& (Force::*getImpl)(Context&) const = &ForceImplAccess::getImplInContext;
        return dynamic_cast<CoordinationForceImpl&>((force.*getImpl)(context));
    }
};

/** The path the CUDA kernel of a force took in a Context's last evaluation. */
static string describeLastEvaluation(const CoordinationForce& force, Context& context) {
    return ForceImplAccess::get(force, context).getKernel().getAs<CudaCalcCoordinationForceKernel>().describeLastEvaluation();
}

/**
 * Evaluate the force in a periodic box of side 4 nm (or none) with the switch set (value "" for
 * unset), check the result against Reference, and return the path the kernel took.
 */
static string pathWith(const string& variable, const string& value, System& system, CoordinationForce& force,
        const vector<Vec3>& positions, bool periodic) {
    Vec3 box[3] = {Vec3(4, 0, 0), Vec3(0, 4, 0), Vec3(0, 0, 4)};
    ScopedEnvironment environment(variable, value);
    if (value.empty())
        unsetenv(variable.c_str());
    compareWithReference(system, force, positions, periodic ? box : NULL, 1.2);
    if (periodic)
        system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, platform, properties);
    context.setPositions(positions);
    context.getState(State::Energy | State::Forces);
    return describeLastEvaluation(force, context);
}

/** Assert that a path has a part ("key=value"). */
static void assertPathHas(const string& path, const string& part) {
    if ((" "+path+" ").find(" "+part+" ") == string::npos)
        throw OpenMMException("The path '"+path+"' lacks '"+part+"'");
}

/** The number after "key=" in a path. */
static int pathValue(const string& path, const string& key) {
    size_t place = (" "+path).find(" "+key+"=");
    if (place == string::npos)
        throw OpenMMException("The path '"+path+"' lacks '"+key+"'");
    return atoi(path.c_str()+place+key.size()+1);
}

/** The path with the switch differs from the default, has the part the switch forces, and agrees with Reference. */
static void assertSwitchChangesPath(const string& variable, const string& value, const string& part, System& system,
        CoordinationForce& force, const vector<Vec3>& positions, bool periodic) {
    string unset = pathWith(variable, "", system, force, positions, periodic);
    string set = pathWith(variable, value, system, force, positions, periodic);
    cout << "    " << variable << ": '" << unset << "' -> '" << set << "'" << endl;
    assertPathHas(set, part);
    ASSERT(set != unset);
}

void testTuningSwitchesChangeThePath() {
    const int numParticles = 2000;
    vector<Vec3> positions = randomPositions(numParticles, 4.0, 41);
    vector<int> all, half;
    for (int i = 0; i < numParticles; i++) {
        all.push_back(i);
        if (i < numParticles/2)
            half.push_back(i);
    }
    System system;
    for (int i = 0; i < numParticles; i++)
        system.addParticle(1.0);
    // All pairs without a box: the tile kernel.
    CoordinationForce* tiles = new CoordinationForce(half);
    tiles->setR0(0.3);
    system.addForce(tiles);
    assertSwitchChangesPath("COORDINATION_L_PER_THREAD", "2", "lPerThread=2", system, *tiles, positions, false);
    // With an energy expression, the chain rule runs in the tile kernel's launch; the switch gives it a launch of its own.
    tiles->setEnergyExpression("0.5*k*(cv-cv0)^2");
    tiles->addGlobalParameter("k", 0.01);
    tiles->addGlobalParameter("cv0", 100.0);
    string chained = pathWith("COORDINATION_CHAINED_TILES", "", system, *tiles, positions, false);
    string separate = pathWith("COORDINATION_CHAINED_TILES", "0", system, *tiles, positions, false);
    cout << "    COORDINATION_CHAINED_TILES: '" << chained << "' -> '" << separate << "'" << endl;
    assertPathHas(chained, "chainRule=chained");
    ASSERT(separate.find("chainRule") == string::npos);
    system.removeForce(0);
    // Two groups of 1,000 on tiles: chunks of 16 of the short group give 252 tiles, more than a
    // multiprocessor each on GPUs of up to 252 (132 on an H100); with the switch at 2 the chained
    // launch takes chunks wide enough for at most one a multiprocessor (on GPUs of 16 or more).
    CoordinationForce* twoTiles = new CoordinationForce(half, vector<int>(all.begin()+numParticles/2, all.end()));
    twoTiles->setR0(0.3);
    twoTiles->setEnergyExpression("0.5*k*(cv-cv0)^2");
    twoTiles->addGlobalParameter("k", 0.001);
    twoTiles->addGlobalParameter("cv0", 100.0);
    system.addForce(twoTiles);
    string ownChunks = pathWith("COORDINATION_CHAINED_TILES", "1", system, *twoTiles, positions, false);
    string wideChunks = pathWith("COORDINATION_CHAINED_TILES", "2", system, *twoTiles, positions, false);
    cout << "    COORDINATION_CHAINED_TILES, two groups: '" << ownChunks << "' -> '" << wideChunks << "'" << endl;
    assertPathHas(wideChunks, "chainRule=chained");
    if (ownChunks.find("chainRule") == string::npos)
        ASSERT(pathValue(wideChunks, "sChunk") > pathValue(ownChunks, "sChunk"));
    system.removeForce(0);
    // One group with a cutoff in a box: neighbour lists of particles by default.
    CoordinationForce* lists = new CoordinationForce(all);
    lists->setR0(0.3);
    lists->setDMax(1.0);
    lists->setUsesPeriodicBoundaryConditions(true);
    lists->setEnergyExpression("0.5*k*(cv-cv0)^2");
    lists->addGlobalParameter("k", 0.001);
    lists->addGlobalParameter("cv0", 100.0);
    system.addForce(lists);
    // With an energy expression, the lists' pass runs the chain rule (kernels/chainedlists.cu); the switch gives it a launch of its own.
    assertPathHas(pathWith("COORDINATION_CHAINED_TILES", "", system, *lists, positions, true), "chainRule=chained");
    ASSERT(pathWith("COORDINATION_CHAINED_TILES", "0", system, *lists, positions, true).find("chainRule") == string::npos);
    assertSwitchChangesPath("COORDINATION_NEIGHBOR_LIST", "0", "kernel=cells", system, *lists, positions, true);
    assertSwitchChangesPath("COORDINATION_NEIGHBOR_LIST", "always", "rebuilds=always", system, *lists, positions, true);
    assertSwitchChangesPath("COORDINATION_LIST_KIND", "homes", "homeLists=1", system, *lists, positions, true);
    assertSwitchChangesPath("COORDINATION_LIST_LANES", "1", "lanes=1", system, *lists, positions, true);
    assertSwitchChangesPath("COORDINATION_NEIGHBOR_SKIN", "0.2", "skin=0.2", system, *lists, positions, true);
    assertSwitchChangesPath("COORDINATION_LIST_SCHEDULE", "device", "binning=device", system, *lists, positions, true);
    // Plain launches; the default is programmatic dependent launches where the GPU takes them (sm_90
    // and later), else plain ones already.
    string launches = pathWith("COORDINATION_DEPENDENT_LAUNCH", "", system, *lists, positions, true);
    if (launches.find("launches=dependent") != string::npos)
        assertSwitchChangesPath("COORDINATION_DEPENDENT_LAUNCH", "0", "launches=plain", system, *lists, positions, true);
    else
        assertPathHas(pathWith("COORDINATION_DEPENDENT_LAUNCH", "0", system, *lists, positions, true), "launches=plain");
    string grid = pathWith("COORDINATION_CELL_GRID", "", system, *lists, positions, true);
    string forced = (grid.find("grid=2,2,2,0") == string::npos ? "2,2,2,0" : "1,1,1,1");
    assertSwitchChangesPath("COORDINATION_CELL_GRID", forced, "grid="+forced, system, *lists, positions, true);
    system.removeForce(0);
    // Two groups with a cutoff in a box: lists of particles where the tiles would evaluate 4M pairs
    // or more; the switch gives them to these 1,000 x 1,100 (sharing 100 particles, whose pairs with
    // themselves are left out), which take the tiles by default.
    CoordinationForce* twoLists = new CoordinationForce(half, vector<int>(all.begin()+numParticles/2-100, all.end()));
    twoLists->setR0(0.3);
    twoLists->setDMax(1.0);
    twoLists->setUsesPeriodicBoundaryConditions(true);
    twoLists->setEnergyExpression("0.5*k*(cv-cv0)^2");
    twoLists->addGlobalParameter("k", 0.001);
    twoLists->addGlobalParameter("cv0", 100.0);
    system.addForce(twoLists);
    assertSwitchChangesPath("COORDINATION_LIST_KIND", "particles", "kernel=lists", system, *twoLists, positions, true);
    {
        // Every particle of both groups has a list (each pair in two); the switch gives the smaller group's alone one.
        ScopedEnvironment kind("COORDINATION_LIST_KIND", "particles");
        assertPathHas(pathWith("COORDINATION_LIST_SIDES", "", system, *twoLists, positions, true), "sides=both");
        assertSwitchChangesPath("COORDINATION_LIST_SIDES", "one", "sides=one", system, *twoLists, positions, true);
    }
    system.removeForce(0);
    // A particle function with a cutoff in a box (here two groups sharing 100 particles): its passes over
    // the neighbour lists (kernels/particlelists.cu); the switch turns them to all pairs (kernels/particles.cu).
    CoordinationForce* perAtom = new CoordinationForce(half, vector<int>(all.begin()+numParticles/2-100, all.end()));
    perAtom->setR0(0.3);
    perAtom->setDMax(1.0);
    perAtom->setUsesPeriodicBoundaryConditions(true);
    perAtom->setParticleFunction(CoordinationForce::MoreThan);
    perAtom->setThreshold(3.0, 0.5, 6, 12, 8.0);
    perAtom->setEnergyExpression("0.5*k*(cv-cv0)^2");
    perAtom->addGlobalParameter("k", 0.001);
    perAtom->addGlobalParameter("cv0", 100.0);
    system.addForce(perAtom);
    assertPathHas(pathWith("COORDINATION_NEIGHBOR_LIST", "", system, *perAtom, positions, true), "lists=particles");
    assertSwitchChangesPath("COORDINATION_NEIGHBOR_LIST", "0", "lists=none", system, *perAtom, positions, true);
    // Its energy expression: the chain rule runs in its gradient pass (kernels/chainedparticles.cu); the switch
    // gives the chain rule a launch of its own.
    string perAtomChained = pathWith("COORDINATION_CHAINED_TILES", "", system, *perAtom, positions, true);
    string perAtomSeparate = pathWith("COORDINATION_CHAINED_TILES", "0", system, *perAtom, positions, true);
    cout << "    COORDINATION_CHAINED_TILES, per-atom: '" << perAtomChained << "' -> '" << perAtomSeparate << "'" << endl;
    assertPathHas(perAtomChained, "chainRule=chained");
    ASSERT(perAtomSeparate.find("chainRule") == string::npos);
    system.removeForce(0);
    // One group and an elementwise function: lists of particles up to 50,000 particles, and lists of homes
    // (kernels/particlehomes.cu) with the switch, restrained (the chain rule) and as the energy itself.
    for (int restrained = 0; restrained < 2; restrained++) {
        CoordinationForce* homes = new CoordinationForce(all);
        homes->setR0(0.3);
        homes->setDMax(1.0);
        homes->setUsesPeriodicBoundaryConditions(true);
        homes->setParticleFunction(CoordinationForce::MoreThan);
        homes->setThreshold(3.0, 0.5, 6, 12, 8.0);
        if (restrained) {
            homes->setEnergyExpression("0.5*k*(cv-cv0)^2");
            homes->addGlobalParameter("k", 0.001);
            homes->addGlobalParameter("cv0", 100.0);
        }
        system.addForce(homes);
        assertSwitchChangesPath("COORDINATION_LIST_KIND", "homes", "lists=homes", system, *homes, positions, true);
        system.removeForce(0);
    }
    // Two groups with a cutoff in a box, on a grid of cells (here the tiles would be cheaper): forces
    // straight to the atoms below 500,000 particles.
    ScopedEnvironment forcedGrid("COORDINATION_CELL_GRID", "1,1,1,1");
    CoordinationForce* cells = new CoordinationForce(half, vector<int>(all.begin()+numParticles/2, all.end()));
    cells->setR0(0.3);
    cells->setDMax(1.0);
    cells->setUsesPeriodicBoundaryConditions(true);
    system.addForce(cells);
    assertSwitchChangesPath("COORDINATION_SORTED_GRADIENT", "1", "sortedForces=1", system, *cells, positions, true);
}

/**
 * The lists of particles whose host schedules the binning (CudaCoordinationNeighborList) over moves
 * in one Context, against Reference at every step: every particle along a direction of its own, 0.011
 * nm a step (dmax 1 nm, skin 0.1 nm: a check asks for a rebuild beyond 0.04 nm, the lists are stale
 * beyond 0.049 nm; a cubic switching function, smooth at dmax), so that the host rebuilds before they are
 * stale and no evaluation falls back;
 * then 20 particles moved by 0.3 nm, beyond the skin: that evaluation takes all pairs (one fallback),
 * and the next rebuilds. One group and two (sharing 100 particles), the plain CV and a particle
 * function (MoreThan: evaluated in the first pass; Max: evaluateParticleFunction), rectangular and
 * triclinic boxes; with COORDINATION_LIST_SCHEDULE=device the binning at every evaluation and no fallback.
 * The plain CV of two groups three times: lists of every particle (the default), of group A alone
 * (COORDINATION_LIST_SIDES=one: A the smaller, 1,000 against 1,100), and of group B alone (the same,
 * the groups swapped, the CV itself the energy).
 */
void testListScheduleFollowsMoves() {
    const int numParticles = 2000;
    vector<Vec3> start = randomPositions(numParticles, 4.0, 43), directions = randomPositions(numParticles, 2.0, 44);
    for (Vec3& d : directions)
        d = (d-Vec3(1, 1, 1))/sqrt((d-Vec3(1, 1, 1)).dot(d-Vec3(1, 1, 1)));
    vector<int> all, half, rest;
    for (int i = 0; i < numParticles; i++) {
        all.push_back(i);
        if (i < numParticles/2)
            half.push_back(i);
        if (i >= numParticles/2-100)
            rest.push_back(i);
    }
    for (int config = 0; config < 6; config++) {
        System system;
        for (int i = 0; i < numParticles; i++)
            system.addParticle(1.0);
        bool twoGroups = (config%2 == 1 || config == 4);
        CoordinationForce* force = (config == 4 ? new CoordinationForce(rest, half) : twoGroups ? new CoordinationForce(half, rest) :
                new CoordinationForce(all));
        ScopedEnvironment sides("COORDINATION_LIST_SIDES", config == 1 || config == 4 ? "one" : "");
        // Smooth at dmax (no kink in the force where a pair's distance in single precision falls on the other side of it).
        force->setSwitchingFunction(CoordinationForce::Cubic);
        force->setD0(0.05);
        force->setDMax(1.0);
        force->setUsesPeriodicBoundaryConditions(true);
        if (config == 2 || config == 3) {
            // c_i about 26 inside the cube of positions.
            force->setParticleFunction(config == 2 ? CoordinationForce::MoreThan : CoordinationForce::Max);
            force->setThreshold(20.0, 0.0, 6, 12, 60.0);
            force->setFunctionBeta(0.5);
        }
        // The groups swapped: the CV as the energy (the forces straight to the atoms).
        if (config != 4) {
            force->setEnergyExpression("0.5*k*(cv-cv0)^2");
            force->addGlobalParameter("k", 0.001);
            force->addGlobalParameter("cv0", 100.0);
        }
        system.addForce(force);
        Vec3 box[3];
        setBox(twoGroups ? TriclinicBox : RectangularBox, 4.0, box);
        system.setDefaultPeriodicBoxVectors(box[0], box[1], box[2]);
        for (string schedule : {"host", "device"}) {
            // Two groups of these sizes take the tiles by default; the switch gives them lists of particles.
            ScopedEnvironment kind("COORDINATION_LIST_KIND", "particles");
            ScopedEnvironment scheduleSwitch("COORDINATION_LIST_SCHEDULE", schedule);
            VerletIntegrator integrator(0.001), referenceIntegrator(0.001);
            Context context(system, integrator, platform, properties);
            Context reference(system, referenceIntegrator, referencePlatform());
            string label = "config "+to_string(config)+", binning by the "+schedule;
            vector<Vec3> positions = start;
            for (int step = 0; step < 9; step++) {
                for (int i = 0; i < numParticles; i++)
                    positions[i] = start[i]+directions[i]*(0.011*step);
                assertForcesOnlyAgree(context, reference, positions, label+", step "+to_string(step));
            }
            string path = describeLastEvaluation(*force, context);
            cout << "    " << path << endl;
            assertPathHas(path, "binning="+schedule);
            assertPathHas(path, "fallbacks=0");
            if (config == 1 || config >= 4)
                assertPathHas(path, config == 5 ? "sides=both" : "sides=one");
            for (int i = 0; i < 20; i++)
                positions[i*97] += directions[i]*0.3;
            assertForcesOnlyAgree(context, reference, positions, label+", 20 particles beyond the skin");
            for (int i = 0; i < numParticles; i++)
                positions[i] += directions[(i+1)%numParticles]*0.004;
            assertForcesOnlyAgree(context, reference, positions, label+", after the rebuild");
            path = describeLastEvaluation(*force, context);
            cout << "    " << path << endl;
            assertPathHas(path, schedule == "host" ? "fallbacks=1" : "fallbacks=0");
        }
    }
}

void testTuningSwitchErrors() {
    System system;
    for (int i = 0; i < 3; i++)
        system.addParticle(1.0);
    system.addForce(new CoordinationForce({0, 1, 2}));
    vector<pair<string, string> > invalid = {{"COORDINATION_L_PER_THREAD", "4"}, {"COORDINATION_SORTED_GRADIENT", "yes"},
            {"COORDINATION_NEIGHBOR_LIST", "2"}, {"COORDINATION_LIST_KIND", "cells"}, {"COORDINATION_LIST_LANES", "3"},
            {"COORDINATION_NEIGHBOR_SKIN", "-1"}, {"COORDINATION_CELL_GRID", "1,1"}, {"COORDINATION_DEPENDENT_LAUNCH", "no"},
            {"COORDINATION_CHAINED_TILES", "yes"}, {"COORDINATION_CHAINED_TILE_CVS", "5"}, {"COORDINATION_LIST_SCHEDULE", "gpu"},
            {"COORDINATION_LIST_SIDES", "two"}};
    for (auto& setting : invalid) {
        ScopedEnvironment environment(setting.first, setting.second);
        VerletIntegrator integrator(0.001);
        ASSERT_COORDINATION_ERROR_NAMING(Context(system, integrator, platform, properties), setting.first+" must be");
        ASSERT_COORDINATION_ERROR_NAMING(Context(system, integrator, platform, properties), "'"+setting.second+"'");
    }
}

void runCudaTuningTests() {
    RUN_TEST(testTuningSwitchesChangeThePath);
    RUN_TEST(testListScheduleFollowsMoves);
    RUN_TEST_LEAKING_CONTEXT(testTuningSwitchErrors);   // the kernel refuses a value after the device context exists
}
