/* Compiles the plugin's CUDA kernels with NVRTC, needing no GPU: CI runs this to catch errors in
 * the kernel sources. Each module is assembled exactly as the plugin assembles it
 * (CudaCoordinationProgram: the parts of the CVs and the chain rule of their energy), behind the
 * prelude that OpenMM 8.6's CudaContext::createModule puts in front of every module (its precision
 * defines and typedefs, and CudaKernelSources::common, read from libOpenMMCUDA itself), and
 * compiled with the options createModule uses, with checks that the cell kernels' argument struct
 * has the layout of the host's (CudaCoordinationCV::CellArguments), and the device's fit of a
 * table's splines (kernels/spline.cu). Also checks that the table
 * coefficients the plugin uploads (CoordinationSpline) are those of this OpenMM's
 * ExpressionUtilities, whose generated code reads them. */

#include "CudaCoordinationCV.h"
#include "CudaCoordinationDistances.h"
#include "CudaCoordinationBondedChainRule.h"
#include "CudaCoordinationProgram.h"
#include "CoordinationSpline.h"
#include "CoordinationBiasForce.h"
#include "CoordinationForce.h"
#include "internal/CoordinationExpression.h"
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
#include <memory>
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

/** The part of a module with the chain rule of a force's energy expression (CudaCoordinationEnergy::setExpression()). */
template <class F>
static CudaCoordinationModulePart chainRulePart(ComputeContext& context, const F& force, const vector<string>& cvNames) {
    map<string, Lepton::CustomFunction*> placeholders;
    vector<const TabulatedFunction*> tables;
    vector<string> tableNames, globalNames;
    for (int i = 0; i < force.getNumTabulatedFunctions(); i++) {
        placeholders[force.getTabulatedFunctionName(i)] = context.getExpressionUtilities().getFunctionPlaceholder(force.getTabulatedFunction(i));
        tables.push_back(&force.getTabulatedFunction(i));
        tableNames.push_back(force.getTabulatedFunctionName(i));
    }
    for (int i = 0; i < force.getNumGlobalParameters(); i++)
        globalNames.push_back(force.getGlobalParameterName(i));
    return CudaCoordinationProgram::getChainRulePart(context, CoordinationExpression::parseEnergyExpression(force, placeholders), cvNames, globalNames, tables, tableNames);
}

/**
 * Checks, compiled after a module, that the cell kernels' argument struct of part index has the layout
 * of the host's CudaCoordinationCV::CellArguments: the size and alignment of the struct and of
 * each type of member that is not a pointer or an int (NVRTC has no offsetof; with the members in
 * the same order, these fix every offset).
 */
template <class Real, class Real4>
static string cellArgumentsLayout(int index) {
    typedef CudaCoordinationCV::CellArguments<Real, Real4> A;
    const string part = "coordinationPart"+to_string(index)+"::";
    const vector<pair<string, pair<size_t, size_t> > > types = {{part+"CellKernelArguments", {sizeof(A), alignof(A)}},
            {part+"CellGrid", {sizeof(A::grid), alignof(decltype(A::grid))}},
            {part+"PairParams", {sizeof(A::params), alignof(decltype(A::params))}}, {"real4", {sizeof(Real4), alignof(Real4)}},
            {"real", {sizeof(Real), alignof(Real)}}};
    stringstream check;
    for (auto& type : types)
        check << "static_assert(sizeof(" << type.first << ") == " << type.second.first << " && alignof(" << type.first << ") == "
                << type.second.second << ", \"the layout of " << type.first << "\");\n";
    return check.str();
}

/**
 * Checks, compiled after a module, that the chained tile launch's argument structs of part index
 * have the layout of the host's CudaCoordinationCV::ChainedTileCV and ChainedTileCVs (the size and
 * alignment of each; the members in the same order fix the offsets).
 */
template <class Real>
static string chainedTileLayout(int index) {
    typedef CudaCoordinationCV::ChainedTileCV<Real> Entry;
    const string part = "coordinationPart"+to_string(index)+"::";
    typedef CudaCoordinationCV::ChainedTileCVs<Real> Set;
    stringstream check;
    check << "static_assert(sizeof(" << part << "ChainedTileCV) == " << sizeof(Entry) << " && alignof(" << part << "ChainedTileCV) == "
            << alignof(Entry) << ", \"the layout of ChainedTileCV\");\n";
    check << "static_assert(sizeof(" << part << "ChainedTileCVs) == " << sizeof(Set) << " && alignof(" << part << "ChainedTileCVs) == "
            << alignof(Set) << ", \"the layout of ChainedTileCVs\");\n";
    return check.str();
}

/** The PTX of a source compiled with NVRTC with createModule's options; throws with NVRTC's log where it fails. */
static string compileWithNvrtc(const string& src, const string& what) {
    nvrtcProgram nvrtc;
    if (nvrtcCreateProgram(&nvrtc, src.c_str(), NULL, 0, NULL, NULL) != NVRTC_SUCCESS)
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
        throw OpenMMException("NVRTC failed for "+what+":\n"+log);
    return ptx;
}

/** Compile the module of some parts with NVRTC and check that it holds each part's kernels (renamed) and no others. */
static void compileModule(ComputeContext& context, const vector<CudaCoordinationModulePart>& parts, const string& precision,
        bool triclinic, const string& label) {
    string src = prelude(precision, triclinic)+CudaCoordinationProgram::assemble(parts, context);
    if (!dumpPrefix.empty())
        ofstream(dumpPrefix+label+"-"+precision+".cu") << src;
    for (int i = 0; i < parts.size(); i++)
        for (const string& kernel : parts[i].kernels)
            if (kernel == "computeCoordinationCells" || kernel == "computeCoordinationCellValues")
                src += (precision == "double" ? cellArgumentsLayout<double, double4>(i) : cellArgumentsLayout<float, float4>(i));
            else if (kernel == "computeCoordinationTilesChained")
                src += (precision == "double" ? chainedTileLayout<double>(i) : chainedTileLayout<float>(i));
    string ptx = compileWithNvrtc(src, label+" ("+precision+")");
    // The kernels asked for are there, and no others.
    vector<string> all = CudaCoordinationProgram::getKernelNames(CudaCoordinationProgram::AllKernels);
    all.push_back("applyChainRule");
    all.push_back("computeCoordinationTilesChained");
    all.push_back("computeParticleListGradientChained");
    for (const string& kernel : CudaCoordinationProgram::getSplinePart().kernels)
        all.push_back(kernel);
    for (int i = 0; i < parts.size(); i++)
        for (const string& kernel : all) {
            bool isWanted = (find(parts[i].kernels.begin(), parts[i].kernels.end(), kernel) != parts[i].kernels.end());
            if ((ptx.find(".entry "+CudaCoordinationProgram::getKernelName(kernel, i)+"(") != string::npos) != isWanted)
                throw OpenMMException("The PTX for "+label+" ("+precision+") "+(isWanted ? "lacks" : "has")+" the kernel "+kernel+
                        " of part "+to_string(i));
        }
}

/** A System of 40 particles, for the padding of the modules. */
static void addParticles(System& system) {
    for (int i = 0; i < 40; i++)
        system.addParticle(1.0);
}

/** A force's module as its CUDA kernel compiles it: the CV's kernel families, and the chain rule of an energy expression. */
static void compile(const CoordinationForce& force, const string& precision, bool triclinic, const string& label, int lPerThread = 1,
        int listLanes = 1, int sBatch = 32, int kernels = CudaCoordinationProgram::AllKernels, int listSide = -1) {
    System system;
    addParticles(system);
    ProgramOnlyContext context(system, precision, triclinic);
    vector<CudaCoordinationModulePart> parts = {CudaCoordinationProgram(force, context, lPerThread, listLanes, sBatch, listSide).getPart(kernels)};
    // The chain rule in the tile kernel's part with the chained tile kernel, or in the particle-list
    // kernels' part with the chained gradient pass, or in the neighbour-list kernels' part with the
    // chained list pass, else in a part of its own.
    if (!CoordinationExpression::isEnergyTheCV(force) && (kernels & CudaCoordinationProgram::TileKernels))
        parts[0] = CudaCoordinationProgram::getChainedPart(parts[0], chainRulePart(context, force, {"cv"}));
    else if (!CoordinationExpression::isEnergyTheCV(force) && (kernels & CudaCoordinationProgram::ParticleListKernels))
        parts[0] = CudaCoordinationProgram::getChainedPart(parts[0], chainRulePart(context, force, {"cv"}),
                CudaCoordinationProgram::ParticleListKernels);
    else if (!CoordinationExpression::isEnergyTheCV(force) && (kernels & CudaCoordinationProgram::ListKernels))
        parts[0] = CudaCoordinationProgram::getChainedPart(parts[0], chainRulePart(context, force, {"cv"}),
                CudaCoordinationProgram::ListKernels);
    else if (!CoordinationExpression::isEnergyTheCV(force))
        parts.push_back(CudaCoordinationProgram::getStandaloneChainRulePart(chainRulePart(context, force, {"cv"})));
    compileModule(context, parts, precision, triclinic, label);
    cout << "  compiled " << label << " (" << precision << ", " << lPerThread << " L a thread, " << listLanes << " list lanes, S batches of "
            << sBatch << ")" << endl;
}

/**
 * A CoordinationBiasForce's module as its CUDA kernel compiles it: each distinct CV configuration
 * once (the families of its pair kernel), and the chain rule of the expression of all CVs, in the
 * part of the last CV that takes tiles (with the chained tile kernel), else in a part of its own.
 */
static void compileBias(const CoordinationBiasForce& force, const string& precision, bool triclinic, const string& label) {
    typedef CudaCoordinationProgram P;
    System system;
    addParticles(system);
    ProgramOnlyContext context(system, precision, triclinic);
    vector<CudaCoordinationModulePart> cvParts;
    vector<string> names;
    vector<int> distanceIndices;
    vector<CoordinationDistance> distances;
    int chained = -1;
    for (int k = 0; k < force.getNumCollectiveVariables(); k++) {
        if (force.isDistance(k)) {
            // A distance has no part of its own: the chain rule computes it (CudaCoordinationDistances).
            CoordinationDistance d;
            force.getDistanceParameters(k, d.particle1, d.particle2, d.component, d.usePeriodic);
            distanceIndices.push_back(k);
            distances.push_back(d);
            names.push_back(force.getCollectiveVariableName(k));
            continue;
        }
        const CoordinationForce& cv = force.getCollectiveVariable(k);
        int kernels = P::CoreKernels | (cv.getMode() == CoordinationForce::PairList ? P::PairKernels :
                cv.usesPeriodicBoundaryConditions() && isfinite(cv.getDMax()) ? P::CellKernels | P::BinningKernels : P::TileKernels);
        cvParts.push_back(CudaCoordinationProgram(cv, context, 1).getPart(kernels));
        names.push_back(force.getCollectiveVariableName(k));
        if (kernels & P::TileKernels)
            chained = k;
    }
    CudaCoordinationModulePart chainRule = chainRulePart(context, force, names);
    CudaCoordinationDistances::addToChainRule(chainRule, distanceIndices, distances);
    vector<CudaCoordinationModulePart> parts;
    for (int k = 0, part = 0; k < force.getNumCollectiveVariables(); k++)
        if (!force.isDistance(k)) {
            const CudaCoordinationModulePart& cvPart = cvParts[part++];
            CudaCoordinationProgram::addPart(parts, k == chained ? CudaCoordinationProgram::getChainedPart(cvPart, chainRule) : cvPart);
        }
    if (chained < 0)
        CudaCoordinationProgram::addPart(parts, CudaCoordinationProgram::getStandaloneChainRulePart(chainRule));
    compileModule(context, parts, precision, triclinic, label);
    cout << "  compiled " << label << " (" << precision << ", " << force.getNumCollectiveVariables() << " CVs in "
            << parts.size() << " parts of the module)" << endl;
}

/** A CV for the bias forces: one group, two groups or a pair list (per-pair Q), switching type and cutoff varied with index. */
static CoordinationForce* biasCV(int index, bool periodic) {
    vector<int> a = {0, 1, 2, 3, 4, 5}, b = {5, 6, 7, 8, 9, 10};
    CoordinationForce* cv = new CoordinationForce();
    if (index%3 == 0)
        cv->setGroup(a);
    else if (index%3 == 1)
        cv->setGroups(a, b);
    else {
        cv->setPairs(a, b, {0.5, 1.0, 0.0, 2.0, 1.0, 0.25}, {0.3, 0.4, 0.35, 0.5, 0.45, 0.33});
        cv->setSwitchingFunction(CoordinationForce::Q);
    }
    if (index%3 != 2)
        cv->setSwitchingFunction((CoordinationForce::SwitchingFunction) (index%7));
    if (index%2 == 1 || cv->getSwitchingFunction() == CoordinationForce::Cubic)
        cv->setDMax(1.2);
    cv->setUsesPeriodicBoundaryConditions(periodic);
    return cv;
}

/**
 * The chain rule's interaction in OpenMM's bonded kernel (CudaCoordinationBondedChainRule), in a
 * kernel of the shape BondedUtilities generates: its prefix code, then a loop over one-particle
 * "bonds" with index, atom1 and pos1, the interaction's code, and the force added to atom1.
 */
static void compileBondedChainRule(const string& precision) {
    stringstream src;
    src << prelude(precision, false) << "#define PADDED_NUM_ATOMS 32\n" << CudaCoordinationProgram::getBondedChainRuleSource();
    src << "KERNEL void computeBondedForces(GLOBAL mm_ulong* RESTRICT forceBuffer, GLOBAL mixed* RESTRICT energyBuffer, "
           "GLOBAL const real4* RESTRICT posq, int groups, GLOBAL const unsigned int* RESTRICT atomIndices0_0, "
           "GLOBAL long long* customArg1, GLOBAL double* customArg2) {\n"
           "mixed energy = 0;\n"
           "for (unsigned int index = GLOBAL_ID; index < 10; index += GLOBAL_SIZE) {\n"
           "    unsigned int atoms0 = atomIndices0_0[index];\n"
           "    unsigned int atom1 = atoms0;\n"
           "    real4 pos1 = posq[atom1];\n"
        << CudaCoordinationBondedChainRule::getInteractionSource("customArg1", "customArg2", 1, 2)
        << "    ATOMIC_ADD(&forceBuffer[atom1], (mm_ulong) realToFixedPoint(force1.x));\n"
           "    ATOMIC_ADD(&forceBuffer[atom1+PADDED_NUM_ATOMS], (mm_ulong) realToFixedPoint(force1.y));\n"
           "    ATOMIC_ADD(&forceBuffer[atom1+PADDED_NUM_ATOMS*2], (mm_ulong) realToFixedPoint(force1.z));\n"
           "    MEM_FENCE;\n"
           "}\n"
           "energyBuffer[GLOBAL_ID] += energy;\n"
           "}\n";
    if (!dumpPrefix.empty())
        ofstream(dumpPrefix+"bonded-chain-rule-"+precision+".cu") << src.str();
    compileWithNvrtc(src.str(), "the bonded chain rule ("+precision+")");
    cout << "  compiled the bonded kernel's chain rule (" << precision << ")" << endl;
}

/**
 * CoordinationSpline's coefficients against ExpressionUtilities::computeFunctionCoefficients of
 * the OpenMM this test links (the layout its generated code reads), to float rounding.
 */
static void checkTableCoefficients() {
    System system;
    addParticles(system);
    ProgramOnlyContext context(system, "mixed", false);
    vector<double> values(9*7*11);
    for (int i = 0; i < values.size(); i++)
        values[i] = sin(0.7*i)+0.01*i;
    vector<double> line(values.begin(), values.begin()+37), periodic = line;
    periodic.back() = periodic.front();
    vector<unique_ptr<TabulatedFunction> > tables;
    tables.emplace_back(new Continuous1DFunction(line, -1.0, 2.5));
    tables.emplace_back(new Continuous1DFunction(periodic, 0.0, 1.0, true));
    tables.emplace_back(new Continuous2DFunction(23, 17, vector<double>(values.begin(), values.begin()+23*17), 0.0, 1.0, 397.0, 517.0));
    tables.emplace_back(new Continuous3DFunction(9, 7, 11, values, -1.0, 1.0, 0.0, 2.0, 2.0, 3.5));
    // Periodic tables of 2 and 3 dimensions (the first and last point of each axis the same).
    vector<double> plane(23*17), cube(9*7*11);
    for (int j = 0; j < 17; j++)
        for (int i = 0; i < 23; i++)
            plane[i+23*j] = values[(i%22)+23*(j%16)];
    for (int k = 0; k < 11; k++)
        for (int j = 0; j < 7; j++)
            for (int i = 0; i < 9; i++)
                cube[i+9*(j+7*k)] = values[(i%8)+9*((j%6)+7*(k%10))];
    tables.emplace_back(new Continuous2DFunction(23, 17, plane, 0.0, 1.0, 397.0, 517.0, true));
    tables.emplace_back(new Continuous3DFunction(9, 7, 11, cube, -1.0, 1.0, 0.0, 2.0, 2.0, 3.5, true));
    for (int t = 0; t < tables.size(); t++) {
        int expectedWidth, width;
        vector<float> expected = context.getExpressionUtilities().computeFunctionCoefficients(*tables[t], expectedWidth);
        vector<float> actual = CoordinationSpline::computeCoefficients(*tables[t], width);
        if (width != expectedWidth || actual.size() != expected.size())
            throw OpenMMException("table "+to_string(t)+": CoordinationSpline's layout differs from ExpressionUtilities'");
        float largest = 0;
        for (float c : expected)
            largest = max(largest, fabs(c));
        for (int i = 0; i < expected.size(); i++)
            if (fabs(actual[i]-expected[i]) > 1e-6*max(fabs(expected[i]), 1e-3f*largest))
                throw OpenMMException("table "+to_string(t)+", coefficient "+to_string(i)+": CoordinationSpline gives "+
                        to_string(actual[i])+", ExpressionUtilities "+to_string(expected[i]));
    }
    cout << tables.size() << " tables' coefficients equal ExpressionUtilities'" << endl;
}

int main(int argc, char* argv[]) {
    try {
        if (argc > 1)
            dumpPrefix = argv[1];
        checkTableCoefficients();
        vector<int> a = {0, 1, 2, 3, 4, 5}, b = {5, 6, 7, 8, 9, 10};
        int count = 0;
        for (string precision : {"single", "mixed", "double"}) {
            compileBondedChainRule(precision);
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
            // A restrained CV on the neighbour lists of particles, its list pass chained with the chain rule.
            CoordinationForce listed(a);
            listed.setDMax(1.2);
            listed.setUsesPeriodicBoundaryConditions(true);
            listed.setEnergyExpression("0.5*k*(cv-3)^2");
            listed.addGlobalParameter("k", 1.0);
            compile(listed, precision, false, "neighbour lists, chained", 1, 16, 32, CudaCoordinationProgram::CoreKernels |
                    CudaCoordinationProgram::BinningKernels | CudaCoordinationProgram::ListKernels);
            // Two groups (sharing a particle) whose lists belong to one group alone (LIST_ONE_SIDED), A's
            // chained with the chain rule, B's in a triclinic box with the energy the CV.
            CoordinationForce oneSided(a, b);
            oneSided.setDMax(1.2);
            oneSided.setUsesPeriodicBoundaryConditions(true);
            oneSided.setEnergyExpression("0.5*k*(cv-3)^2");
            oneSided.addGlobalParameter("k", 1.0);
            const int listKernels = CudaCoordinationProgram::CoreKernels | CudaCoordinationProgram::BinningKernels |
                    CudaCoordinationProgram::ListKernels;
            compile(oneSided, precision, false, "two groups' lists of group A alone, chained", 1, 32, 32, listKernels, 0);
            CoordinationForce oneSidedB(a, b);
            oneSidedB.setDMax(1.2);
            oneSidedB.setUsesPeriodicBoundaryConditions(true);
            compile(oneSidedB, precision, true, "two groups' lists of group B alone, triclinic", 1, 8, 32, listKernels, 1);
            count += 6;
            // Particle functions (kernels/particles.cu) as a Context compiles them: the particle kernels, and the
            // chain rule in a part of its own. One group in a triclinic box with a cutoff and a distance power;
            // two groups that share a particle (a and b share 5), with a Custom switching function. (Every
            // configuration above compiles them too, in AllKernels.)
            typedef CudaCoordinationProgram P;
            CoordinationForce perAtom(a);
            perAtom.setParticleFunction(CoordinationForce::MoreThan);
            perAtom.setThreshold(3.0, 0.5, 6, 10, 8.0);
            perAtom.setDistancePower(1.5);
            perAtom.setDMax(1.0);
            perAtom.setUsesPeriodicBoundaryConditions(true);
            perAtom.setEnergyExpression("0.5*k*(cv-2)^2");
            perAtom.addGlobalParameter("k", 10.0);
            compile(perAtom, precision, true, "particle function MoreThan, distance power, triclinic", 1, 1, 32,
                    P::CoreKernels | P::ParticleKernels);
            CoordinationForce overlapping(a, b);
            overlapping.setParticleFunction(CoordinationForce::Max);
            overlapping.setSwitchingFunction(CoordinationForce::Custom);
            overlapping.setCustomExpression("exp(-x^2)");
            compile(overlapping, precision, false, "particle function Max, two groups sharing a particle, Custom", 1, 1, 32,
                    P::CoreKernels | P::ParticleKernels);
            // The same on the neighbour lists (kernels/particlelists.cu), as a Context with lists compiles them: the
            // particle, binning, list and particle-list families in one part; 4 and 32 lanes a list particle.
            const int listFamilies = P::CoreKernels | P::ParticleKernels | P::BinningKernels | P::ListKernels | P::ParticleListKernels;
            compile(perAtom, precision, true, "particle function MoreThan on neighbour lists, distance power, triclinic", 1, 4, 32,
                    listFamilies);
            CoordinationForce overlappingLists(a, b);
            overlappingLists.setParticleFunction(CoordinationForce::Max);
            overlappingLists.setSwitchingFunction(CoordinationForce::Custom);
            overlappingLists.setCustomExpression("exp(-x^2)");
            overlappingLists.setDMax(1.0);
            overlappingLists.setUsesPeriodicBoundaryConditions(true);
            compile(overlappingLists, precision, false, "particle function Max on neighbour lists, two groups sharing a particle, Custom",
                    1, 32, 32, listFamilies);
            count += 4;
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
        // CoordinationBiasForces: 2, 3 and 8 CVs of mixed modes and switching types (two of the same
        // configuration share a part), with an expression, a 2-D table and a 3-D table.
        for (string precision : {"single", "mixed", "double"}) {
            CoordinationBiasForce two("0.5*k1*(c1-a)^2+bias(c1, c2)");
            two.addGlobalParameter("k1", 10.0);
            two.addGlobalParameter("a", 1.0);
            two.addTabulatedFunction("bias", new Continuous2DFunction(3, 2, {0.0, 1.0, 0.5, 0.2, 0.1, 0.3}, 0.0, 5.0, 0.0, 2.0));
            two.addCollectiveVariable("c1", biasCV(0, true));
            two.addCollectiveVariable("c2", biasCV(1, true));
            // With the CVs' running statistics (OPES's adaptive sigma): a launch flag of the chain rule
            // (FLAG_CV_STATISTICS), so updateCVStatistics() is in every chain-rule module compiled here.
            two.setCVStatisticsStride(100);
            compileBias(two, precision, false, "bias 2 CVs, 2-D table, CV statistics");
            CoordinationBiasForce three("w(c1, c2, c3)+k*max(0, c1+c2-c3)^2");
            three.addGlobalParameter("k", 1.0);
            three.addTabulatedFunction("w", new Continuous3DFunction(2, 2, 2, {0, 1, 2, 3, 4, 5, 6, 7}, 0, 1, 0, 1, 0, 1));
            for (int k = 0; k < 3; k++)
                three.addCollectiveVariable("c"+to_string(k+1), biasCV(k+2, false));
            compileBias(three, precision, true, "bias 3 CVs, 3-D table, triclinic");
            // Tables of expressions of the CVs (a metadynamics bias on a CVFunction, as the PLUMED reader
            // builds for METAD on a COMBINE): 1-D on a nonlinear function, 2-D on a difference and a CV.
            CoordinationBiasForce function1("bias(c1-0.5*c2^2)");
            function1.addTabulatedFunction("bias", new Continuous1DFunction({0.0, 1.0, 0.5, 0.2}, -5.0, 5.0));
            CoordinationBiasForce function2("bias(c1-c2, c3)");
            function2.addTabulatedFunction("bias", new Continuous2DFunction(3, 2, {0.0, 1.0, 0.5, 0.2, 0.1, 0.3}, -5.0, 5.0, 0.0, 2.0));
            for (int k = 0; k < 3; k++) {
                if (k < 2)
                    function1.addCollectiveVariable("c"+to_string(k+1), biasCV(k, true));
                function2.addCollectiveVariable("c"+to_string(k+1), biasCV(k, true));
            }
            compileBias(function1, precision, false, "bias of a table of an expression, 1-D");
            compileBias(function2, precision, false, "bias of a table of an expression, 2-D");
            string expression = "0";
            CoordinationBiasForce eight("0");
            for (int k = 0; k < 8; k++) {
                eight.addCollectiveVariable("x"+to_string(k), biasCV(k%4, true));
                expression += "+0.5*(x"+to_string(k)+"-"+to_string(k)+")^2";
            }
            eight.setEnergyExpression(expression);
            compileBias(eight, precision, false, "bias 8 CVs, harmonic");
            // Distance CVs beside coordination numbers (CoordinationBiasForce::addDistance(), computed in the
            // chain rule): the length with and without the nearest image and a component, in the chained tile
            // kernel's part (c1 takes tiles) and in the chain rule's own part (c2 takes cells), triclinic.
            CoordinationBiasForce distances("0.5*k*(d-0.5)^2 + c1*dz + dn + bias(d, c1)");
            distances.addGlobalParameter("k", 100.0);
            distances.addTabulatedFunction("bias", new Continuous2DFunction(3, 2, {0.0, 1.0, 0.5, 0.2, 0.1, 0.3}, 0.0, 5.0, 0.0, 2.0));
            distances.addDistance("d", 3, 17);
            distances.addCollectiveVariable("c1", biasCV(0, true));
            distances.addDistance("dz", 17, 3, 2);
            distances.addDistance("dn", 0, 39, -1, false);
            distances.setCVStatisticsStride(10);
            compileBias(distances, precision, true, "bias of 3 distances and a CV on tiles, chained, triclinic");
            CoordinationBiasForce distanceCells("c2*d");
            distanceCells.addCollectiveVariable("c2", biasCV(1, true));
            distanceCells.addDistance("d", 1, 2, 0);
            compileBias(distanceCells, precision, false, "bias of a distance and a CV in cells");
            // Distances alone (no CoordinationForce): the chain rule's part by itself, triclinic.
            CoordinationBiasForce distancesAlone("0.5*k*(d-0.5)^2 + dy");
            distancesAlone.addGlobalParameter("k", 100.0);
            distancesAlone.addDistance("d", 3, 17);
            distancesAlone.addDistance("dy", 17, 3, 1);
            compileBias(distancesAlone, precision, true, "bias of 2 distances alone, triclinic");
            // The device's fit of a table's splines (CoordinationBiasForce::updateTabulatedFunctionInContext()).
            System system;
            addParticles(system);
            ProgramOnlyContext context(system, precision, false);
            compileModule(context, {CudaCoordinationProgram::getSplinePart()}, precision, false, "table spline fit");
            cout << "  compiled table spline fit (" << precision << ")" << endl;
            count += 9;
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
