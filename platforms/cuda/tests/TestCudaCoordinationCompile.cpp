/* Compiles the plugin's CUDA kernels with NVRTC, needing no GPU: CI runs this to catch errors in
 * the kernel sources. The program is assembled exactly as the plugin assembles it
 * (CudaCoordinationProgram), behind the prelude that OpenMM 8.6's CudaContext::createModule puts
 * in front of every module (its precision defines and typedefs, and CudaKernelSources::common,
 * read from libOpenMMCUDA itself), and compiled with the options createModule uses. */

#include "CudaCoordinationProgram.h"
#include "CoordinationForce.h"
#include "openmm/System.h"
#include "openmm/TabulatedFunction.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeEvent.h"
#include "openmm/common/ComputeProgram.h"
#include "openmm/common/ComputeQueue.h"
#include "openmm/common/ComputeSort.h"
#include "openmm/common/ExpressionUtilities.h"
#include "openmm/common/FFT3D.h"
#include "openmm/OpenMMException.h"
#include <nvrtc.h>
#include <cmath>
#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

namespace OpenMM {
/** The kernel sources of OpenMM's CUDA platform, exported by libOpenMMCUDA. */
class CudaKernelSources {
public:
    static const std::string common;
};
}

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

/** A ComputeContext that answers only what assembling a program asks: precision, box shape, padding, code generation. */
class ProgramOnlyContext : public ComputeContext {
public:
    ProgramOnlyContext(const System& system, const string& precision, bool triclinic) : ComputeContext(system),
            precision(precision), triclinic(triclinic), expressions(*this) {
        numAtoms = system.getNumParticles();
        paddedNumAtoms = 32*((numAtoms+31)/32);
    }
    bool getUseDoublePrecision() const {return precision == "double";}
    bool getUseMixedPrecision() const {return precision == "mixed";}
    bool getBoxIsTriclinic() const {return triclinic;}
    ExpressionUtilities& getExpressionUtilities() {return expressions;}
    bool getSupportsDoublePrecision() const {return true;}
    bool getSupports64BitGlobalAtomics() const {return true;}
    bool getIsCPU() const {return false;}
    int getSIMDWidth() const {return 32;}
    int getNumContexts() const {return 1;}
    int getContextIndex() const {return 0;}
    // Everything else needs a GPU.
    [[noreturn]] static void unavailable() {throw OpenMMException("not available without a GPU");}
    vector<ComputeContext*> getAllContexts() {unavailable();}
    ContextImpl* getContextImpl() {unavailable();}
    double& getEnergyWorkspace() {unavailable();}
    ComputeQueue createQueue() {unavailable();}
    ArrayInterface* createArray() {unavailable();}
    ComputeEvent createEvent() {unavailable();}
    ComputeSort createSort(ComputeSortImpl::SortTrait* trait, unsigned int length, bool uniform) {unavailable();}
    ComputeProgram compileProgram(const string source, const map<string, string>& defines) {unavailable();}
    int computeThreadBlockSize(double memory) const {unavailable();}
    void clearBuffer(ArrayInterface& array) {unavailable();}
    void addAutoclearBuffer(ArrayInterface& array) {unavailable();}
    int getNumAtomBlocks() const {unavailable();}
    int getNumThreadBlocks() const {unavailable();}
    int getMaxThreadBlockSize() const {unavailable();}
    ArrayInterface& getPosq() {unavailable();}
    ArrayInterface& getPosqCorrection() {unavailable();}
    ArrayInterface& getVelm() {unavailable();}
    ArrayInterface& getForceBuffers() {unavailable();}
    ArrayInterface& getFloatForceBuffer() {unavailable();}
    ArrayInterface& getLongForceBuffer() {unavailable();}
    ArrayInterface& getEnergyBuffer() {unavailable();}
    ArrayInterface& getEnergyParamDerivBuffer() {unavailable();}
    void* getPinnedBuffer() {unavailable();}
    ThreadPool& getThreadPool() {unavailable();}
    ArrayInterface& getAtomIndexArray() {unavailable();}
    void getPeriodicBoxVectors(Vec3& a, Vec3& b, Vec3& c) const {unavailable();}
    void setPeriodicBoxVectors(const Vec3& a, const Vec3& b, const Vec3& c) {unavailable();}
    IntegrationUtilities& getIntegrationUtilities() {unavailable();}
    BondedUtilities& getBondedUtilities() {unavailable();}
    NonbondedUtilities& getNonbondedUtilities() {unavailable();}
    NonbondedUtilities* createNonbondedUtilities() {unavailable();}
    FFT3D createFFT(int xsize, int ysize, int zsize, bool realToComplex) {unavailable();}
    void initializeContexts() {unavailable();}
    void setCharges(const vector<double>& charges) {unavailable();}
    bool requestPosqCharges() {unavailable();}
    const vector<string>& getEnergyParamDerivNames() const {unavailable();}
    map<string, double>& getEnergyParamDerivWorkspace() {unavailable();}
    void addEnergyParameterDerivative(const string& param) {unavailable();}
    void flushQueue() {unavailable();}
private:
    string precision;
    bool triclinic;
    ExpressionUtilities expressions;
};

/** The text createModule puts before a module's own defines and source. */
static string prelude(const string& precision, bool triclinic) {
    bool useDouble = (precision == "double"), useMixed = (precision == "mixed");
    string real = (useDouble ? "double" : "float"), mixed = (useDouble || useMixed ? "double" : "float");
    stringstream src;
    src << "// Compilation Options: --use_fast_math\n\n";
    if (useDouble)
        src << "#define USE_DOUBLE_PRECISION 1\n";
    if (useMixed)
        src << "#define USE_MIXED_PRECISION 1\n";
    for (int n = 2; n <= 4; n++) {
        src << "#define make_real" << n << " make_" << real << n << "\n";
        src << "#define make_mixed" << n << " make_" << mixed << n << "\n";
    }
    const char* functions[][2] = {{"SQRT", "sqrt"}, {"RSQRT", "rsqrt"}, {"EXP", "exp"}, {"LOG", "log"}, {"POW", "pow"},
            {"COS", "cos"}, {"SIN", "sin"}, {"TAN", "tan"}, {"ACOS", "acos"}, {"ASIN", "asin"}, {"ATAN", "atan"},
            {"ERF", "erf"}, {"ERFC", "erfc"}};
    for (auto& f : functions)
        src << "#define " << f[0] << " " << f[1] << (useDouble ? "" : "f") << "\n";
    src << "#define RECIP " << (useDouble ? "1.0/" : "1.0f/") << "\n";
    if (triclinic)
        src << "#define APPLY_PERIODIC_TO_DELTA(delta) {real scale3 = floor(delta.z*invPeriodicBoxSize.z+0.5f); "
               "delta.x -= scale3*periodicBoxVecZ.x; delta.y -= scale3*periodicBoxVecZ.y; delta.z -= scale3*periodicBoxVecZ.z; "
               "real scale2 = floor(delta.y*invPeriodicBoxSize.y+0.5f); delta.x -= scale2*periodicBoxVecY.x; "
               "delta.y -= scale2*periodicBoxVecY.y; real scale1 = floor(delta.x*invPeriodicBoxSize.x+0.5f); "
               "delta.x -= scale1*periodicBoxVecX.x;}\n";
    else
        src << "#define APPLY_PERIODIC_TO_DELTA(delta) {delta.x -= floor(delta.x*invPeriodicBoxSize.x+0.5f)*periodicBoxSize.x; "
               "delta.y -= floor(delta.y*invPeriodicBoxSize.y+0.5f)*periodicBoxSize.y; "
               "delta.z -= floor(delta.z*invPeriodicBoxSize.z+0.5f)*periodicBoxSize.z;}\n";
    src << "\n";
    for (string name : {"real", "mixed"}) {
        string type = (name == "real" ? real : mixed);
        src << "typedef " << type << " " << name << ";\n";
        for (int n = 2; n <= 4; n++)
            src << "typedef " << type << n << " " << name << n << ";\n";
    }
    src << "typedef unsigned int tileflags;\n";
    src << CudaKernelSources::common << "\n";
    return src.str();
}

// Where to write each program (a path prefix, the first command-line argument), to inspect it with nvcc -Xptxas -v.
static string dumpPrefix;

static void compile(const CoordinationForce& force, const string& precision, bool triclinic, const string& label, int lPerThread = 1,
        int listLanes = 1, int sBatch = 32, int kernels = CudaCoordinationProgram::AllKernels) {
    System system;
    for (int i = 0; i < 40; i++)
        system.addParticle(1.0);
    ProgramOnlyContext context(system, precision, triclinic);
    CudaCoordinationProgram program(force, context, lPerThread, listLanes, sBatch);
    stringstream src;
    src << prelude(precision, triclinic);
    for (auto& define : program.getDefines(kernels)) {
        src << "#define " << define.first;
        if (!define.second.empty())
            src << " " << define.second;
        src << "\n";
    }
    src << "\n" << program.source << "\n";
    if (!dumpPrefix.empty())
        ofstream(dumpPrefix+label+"-"+precision+".cu") << src.str();
    nvrtcProgram nvrtc;
    if (nvrtcCreateProgram(&nvrtc, src.str().c_str(), NULL, 0, NULL, NULL) != NVRTC_SUCCESS)
        throw OpenMMException("nvrtcCreateProgram failed");
    const char* options[] = {"-arch=compute_90", "--use_fast_math"};
    nvrtcResult result = nvrtcCompileProgram(nvrtc, 2, options);
    size_t logSize;
    nvrtcGetProgramLogSize(nvrtc, &logSize);
    string log(logSize, '\0');
    nvrtcGetProgramLog(nvrtc, &log[0]);
    string ptx;
    if (result == NVRTC_SUCCESS) {
        size_t ptxSize;
        nvrtcGetPTXSize(nvrtc, &ptxSize);
        ptx.resize(ptxSize);
        nvrtcGetPTX(nvrtc, &ptx[0]);
    }
    nvrtcDestroyProgram(&nvrtc);
    if (result != NVRTC_SUCCESS)
        throw OpenMMException("NVRTC failed for "+label+" ("+precision+"):\n"+log);
    // The families asked for are there, and no others.
    for (string kernel : CudaCoordinationProgram::getKernelNames(CudaCoordinationProgram::AllKernels)) {
        vector<string> wanted = CudaCoordinationProgram::getKernelNames(kernels);
        bool isWanted = (find(wanted.begin(), wanted.end(), kernel) != wanted.end());
        if ((ptx.find(".entry "+kernel+"(") != string::npos) != isWanted)
            throw OpenMMException("The PTX for "+label+" ("+precision+") "+(isWanted ? "lacks" : "has")+" the kernel "+kernel);
    }
    cout << "  compiled " << label << " (" << precision << ", " << lPerThread << " L a thread, " << listLanes << " list lanes, S batches of "
            << sBatch << ")" << endl;
}

int main(int argc, char* argv[]) {
    try {
        if (argc > 1)
            dumpPrefix = argv[1];
        vector<int> a = {0, 1, 2, 3, 4, 5}, b = {5, 6, 7, 8, 9, 10};
        int count = 0;
        for (string precision : {"single", "mixed", "double"}) {
            // Every switching type, rotating through the modes, boxes, energies and tile kernels so that each appears.
            for (int type = CoordinationForce::Rational; type <= CoordinationForce::Q; type++) {
                CoordinationForce force;
                if (type%3 == 0)
                    force.setGroup(a);
                else
                    force.setGroups(a, b, type%3 == 2);
                force.setSwitchingFunction((CoordinationForce::SwitchingFunction) type);
                force.setCustomExpression("exp(-x^2)/(1+x)");
                if (type == CoordinationForce::Cubic || type%2 == 1)
                    force.setDMax(1.2);
                force.setUsesPeriodicBoundaryConditions(type%2 == 0);
                if (type%2 == 1) {
                    force.setEnergyExpression("0.5*k*(cv-cv0)^2+bias(cv)");
                    force.addGlobalParameter("k", 10.0);
                    force.addGlobalParameter("cv0", 1.0);
                    force.addTabulatedFunction("bias", new Continuous1DFunction({0.0, 1.0, 0.5, 0.2}, 0.0, 5.0));
                }
                compile(force, precision, type == CoordinationForce::Gaussian, "type "+to_string(type), 1+(type/2)%2, 1 << (type%6),
                        type%2 == 0 ? 32 : 16);
                count++;
            }
            // The Rational code paths: general m with and without r^2 alone, odd n, d0 > 0, no stretch.
            CoordinationForce general(a, b);
            general.setN(6);
            general.setM(10);
            compile(general, precision, false, "Rational n=6 m=10 from r^2", 2);
            CoordinationForce odd(a, b);
            odd.setN(5);
            odd.setM(8);
            odd.setD0(0.1);
            odd.setStretch(false);
            odd.setUsesPeriodicBoundaryConditions(true);
            compile(odd, precision, true, "Rational n=5 m=8 d0>0 triclinic");
            CoordinationForce energyOnly(a);
            energyOnly.setEnergyExpression("k*max(0, cv-upper)^2");
            energyOnly.addGlobalParameter("k", 1.0);
            energyOnly.addGlobalParameter("upper", 3.0);
            compile(energyOnly, precision, false, "flat-bottom restraint", 2);
            count += 3;
            // Pair lists with weights and r0s of their own (PAIR_PARAMETERS): Q with (w, ref) per pair,
            // Q with a stretched cutoff, Rational from r^2 with its automatic cutoff, no stretch, Custom.
            vector<double> weights = {0.5, 1.0, 0.0, 2.0, 1.0, 0.25}, r0s = {0.3, 0.4, 0.35, 0.5, 0.45, 0.33};
            CoordinationForce q;
            q.setPairs(a, b, weights, r0s);
            q.setSwitchingFunction(CoordinationForce::Q);
            q.setEnergyExpression("0.5*k*(cv-0.8)^2");
            q.addGlobalParameter("k", 100.0);
            compile(q, precision, false, "Q per pair");
            q.setDMax(1.5);
            q.setUsesPeriodicBoundaryConditions(true);
            compile(q, precision, true, "Q per pair, stretched cutoff, triclinic");
            CoordinationForce rational;
            rational.setPairs(a, b, {}, r0s);
            compile(rational, precision, false, "Rational per-pair r0 from r^2, automatic cutoff");
            rational.setD0(0.05);
            rational.setStretch(false);
            rational.setPairParameters(weights, {});
            compile(rational, precision, false, "Rational per-pair weight, d0, no stretch");
            CoordinationForce custom;
            custom.setPairs(a, b, weights, r0s);
            custom.setSwitchingFunction(CoordinationForce::Custom);
            custom.setCustomExpression("exp(-x^2)");
            compile(custom, precision, false, "Custom per pair");
            count += 5;
        }
        // Each family of kernels alone, as a Context compiles them (here one group in a periodic box).
        CoordinationForce cells(a);
        cells.setDMax(1.0);
        cells.setUsesPeriodicBoundaryConditions(true);
        for (int family = 1; family < CudaCoordinationProgram::AllKernels; family *= 2) {
            compile(cells, "mixed", false, "kernel family "+to_string(family), 1, 1, 32, family);
            count++;
        }
        cout << count << " programs compiled" << endl;
    }
    catch (const exception& e) {
        cout << "exception: " << e.what() << endl;
        return 1;
    }
    cout << "Done" << endl;
    return 0;
}
