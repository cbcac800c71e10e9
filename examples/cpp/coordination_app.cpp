/*
 * A C++ program that uses openmm-coordination: the coordination number of an ion by three water
 * oxygens at 0.25, 0.3 and 0.4 nm (PLUMED: COORDINATION GROUPA=1 GROUPB=2-4 R_0=0.3), and its
 * forces, on OpenMM's CPU platform, checked against the same numbers computed here by hand.
 * Prints both; exits with 1 if they differ, or on any error.
 *
 * Build it against an installed openmm-coordination (README.md, "From C++"):
 *     cmake -S examples/cpp -B build-app -DCMAKE_PREFIX_PATH="$(python -m openmmcoordination config --cmake-prefix)"
 *     cmake --build build-app
 *     build-app/coordination_app
 * or without CMake:
 *     g++ examples/cpp/coordination_app.cpp -o coordination_app $(python -m openmmcoordination config --cflags --libs)
 *     ./coordination_app
 */

#include "OpenMM.h"
#include "CoordinationForce.h"
#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

using namespace CoordinationPlugin;

/**
 * The stretched rational switching function of the force's defaults (n = 6, m = 12, d0 = 0,
 * dmax = r0*(1e-5)^(1/(n-m))) at a distance r in nm: s(r) = 1/(1 + (r/r0)^6), stretched so that
 * it reaches 0 at dmax, where s is 1/(1 + 1e5). Sets dsdr to its derivative in 1/nm.
 */
static double switching(double r, double r0, double& dsdr) {
    double x6 = std::pow(r/r0, 6), atDMax = 1/(1+1e5), scale = 1/(1-atDMax);
    dsdr = -6*x6/(r*(1+x6)*(1+x6))*scale;
    return (1/(1+x6)-atDMax)*scale;
}

int main() {
    try {
        const double distances[] = {0.25, 0.3, 0.4};           // nm, along x, y and z
        OpenMM::System system;
        system.setDefaultPeriodicBoxVectors(OpenMM::Vec3(5, 0, 0), OpenMM::Vec3(0, 5, 0), OpenMM::Vec3(0, 0, 5));
        std::vector<OpenMM::Vec3> positions = {OpenMM::Vec3(1, 1, 1)};
        std::vector<int> ions = {system.addParticle(22.99)}, oxygens;
        for (int k = 0; k < 3; k++) {
            OpenMM::Vec3 offset;
            offset[k] = distances[k];
            positions.push_back(positions[0]+offset);
            oxygens.push_back(system.addParticle(16.0));
        }
        OpenMM::VerletIntegrator integrator(0.001);

        CoordinationForce* cv = new CoordinationForce(ions, oxygens);   // std::vector<int> each
        cv->setR0(0.3);
        cv->setUsesPeriodicBoundaryConditions(true);
        system.addForce(cv);                                            // the System owns it
        OpenMM::Platform::loadPluginsFromDirectory(OPENMM_COORDINATION_PLUGIN_DIR);   // OpenMM's platforms and ours
        OpenMM::Context context(system, integrator, OpenMM::Platform::getPlatformByName("CPU"));
        context.setPositions(positions);
        double n = cv->getCollectiveVariableValue(context);

        // By hand: the CV is the energy (kJ/mol); each oxygen is pushed along its axis by -ds/dr,
        // the ion by the opposite of their sum.
        double expected = 0, dsdr;
        std::vector<OpenMM::Vec3> expectedForces(4);
        for (int k = 0; k < 3; k++) {
            expected += switching(distances[k], 0.3, dsdr);
            expectedForces[k+1][k] = -dsdr;
            expectedForces[0][k] = dsdr;
        }
        OpenMM::State state = context.getState(OpenMM::State::Energy | OpenMM::State::Forces);
        bool agree = std::fabs(n-expected) <= 1e-9*expected && std::fabs(state.getPotentialEnergy()-expected) <= 1e-9*expected;
        std::printf("platform %s: coordination number %.10f, energy %.10f kJ/mol (by hand %.10f)\n",
                context.getPlatform().getName().c_str(), n, state.getPotentialEnergy(), expected);
        for (int i = 0; i < 4; i++) {
            OpenMM::Vec3 force = state.getForces()[i], difference = force-expectedForces[i];
            agree = agree && std::sqrt(difference.dot(difference)) <= 1e-9*std::fabs(expectedForces[1][0]);
            std::printf("force on particle %d: %12.6f %12.6f %12.6f kJ/mol/nm (by hand %12.6f %12.6f %12.6f)\n", i,
                    force[0], force[1], force[2], expectedForces[i][0], expectedForces[i][1], expectedForces[i][2]);
        }
        std::printf(agree ? "agree\n" : "DISAGREE\n");
        return agree ? 0 : 1;
    }
    catch (const std::exception& e) {
        std::printf("error: %s\n", e.what());
        for (const std::string& failure : OpenMM::Platform::getPluginLoadFailures())
            std::printf("plugin load failure: %s\n", failure.c_str());
        return 1;
    }
}
