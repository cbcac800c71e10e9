#include "CudaCoordinationTuning.h"
#include "openmm/OpenMMException.h"
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

/** The variable's text, "" where it is unset. */
static string variable(const char* name) {
    const char* value = getenv(name);
    return (value == NULL ? "" : value);
}

static void invalid(const char* name, const string& allowed, const string& value) {
    throw OpenMMException(string("CoordinationForce: the environment variable ")+name+" must be "+allowed+", not '"+value+"'");
}

CudaCoordinationTuning CudaCoordinationTuning::fromEnvironment() {
    CudaCoordinationTuning tuning;
    string value = variable("COORDINATION_L_PER_THREAD");
    if (value == "1" || value == "2")
        tuning.lPerThread = stoi(value);
    else if (value != "")
        invalid("COORDINATION_L_PER_THREAD", "1 or 2", value);
    value = variable("COORDINATION_SORTED_GRADIENT");
    if (value == "0" || value == "1")
        tuning.sortedGradient = stoi(value);
    else if (value != "")
        invalid("COORDINATION_SORTED_GRADIENT", "0 or 1", value);
    value = variable("COORDINATION_NEIGHBOR_LIST");
    if (value == "0")
        tuning.neighborList = ListsOff;
    else if (value == "always")
        tuning.neighborList = ListsAlwaysRebuilt;
    else if (value != "" && value != "1")
        invalid("COORDINATION_NEIGHBOR_LIST", "0, 1 or always", value);
    value = variable("COORDINATION_LIST_KIND");
    if (value == "particles")
        tuning.listKind = KindParticles;
    else if (value == "homes")
        tuning.listKind = KindHomes;
    else if (value != "")
        invalid("COORDINATION_LIST_KIND", "particles or homes", value);
    value = variable("COORDINATION_LIST_LANES");
    if (value != "") {
        int lanes = atoi(value.c_str());
        if (lanes < 1 || lanes > 32 || (lanes & (lanes-1)) != 0 || to_string(lanes) != value)
            invalid("COORDINATION_LIST_LANES", "1, 2, 4, 8, 16 or 32", value);
        tuning.listLanes = lanes;
    }
    value = variable("COORDINATION_LIST_SIDES");
    if (value == "one" || value == "both")
        tuning.oneSidedLists = (value == "one");
    else if (value != "")
        invalid("COORDINATION_LIST_SIDES", "one or both", value);
    value = variable("COORDINATION_NEIGHBOR_SKIN");
    if (value != "") {
        char* end;
        tuning.neighborSkin = strtod(value.c_str(), &end);
        if (*end != '\0' || !(tuning.neighborSkin >= 0 && tuning.neighborSkin < 1e3))
            invalid("COORDINATION_NEIGHBOR_SKIN", "a distance >= 0 in nm", value);
    }
    value = variable("COORDINATION_LIST_SCHEDULE");
    if (value == "host")
        tuning.listSchedule = CudaCoordinationTuning::ScheduleHost;
    else if (value == "device")
        tuning.listSchedule = CudaCoordinationTuning::ScheduleDevice;
    else if (value != "")
        invalid("COORDINATION_LIST_SCHEDULE", "host or device", value);
    value = variable("COORDINATION_LIST_EARLY_SHARE");
    if (value != "") {
        char* end;
        tuning.listEarlyShare = strtod(value.c_str(), &end);
        if (*end != '\0' || !(tuning.listEarlyShare > 0 && tuning.listEarlyShare <= 0.49))
            invalid("COORDINATION_LIST_EARLY_SHARE", "a share of the skin above 0 and at most 0.49", value);
    }
    value = variable("COORDINATION_CELL_GRID");
    if (value != "") {
        int* g = tuning.cellGrid;
        char extra;
        if (sscanf(value.c_str(), "%d,%d,%d,%d%c", &g[0], &g[1], &g[2], &g[3], &extra) != 4 || g[0] < 1 || g[0] > 4 || g[1] < 1 ||
                g[1] > 3 || g[2] < 1 || g[2] > 3 || g[3] < 0 || g[3] > 8)
            invalid("COORDINATION_CELL_GRID", "rx,ry,rz,runLength with rx in 1-4, ry and rz in 1-3, runLength in 0-8", value);
    }
    value = variable("COORDINATION_DEPENDENT_LAUNCH");
    if (value == "0" || value == "1")
        tuning.dependentLaunch = (value == "1");
    else if (value != "")
        invalid("COORDINATION_DEPENDENT_LAUNCH", "0 or 1", value);
    value = variable("COORDINATION_CHAINED_TILES");
    if (value == "0" || value == "1" || value == "2") {
        tuning.chainedTiles = (value != "0");
        tuning.widenChainedTiles = (value == "2");
    }
    else if (value != "")
        invalid("COORDINATION_CHAINED_TILES", "0, 1 or 2", value);
    value = variable("COORDINATION_CHAINED_TILE_CVS");
    if (value == "1" || value == "2" || value == "3" || value == "4")
        tuning.chainedTileCVs = stoi(value);
    else if (value != "")
        invalid("COORDINATION_CHAINED_TILE_CVS", "1, 2, 3 or 4", value);
    return tuning;
}
