#include "CudaCoordinationProgram.h"
#include "CudaCoordinationKernelSources.h"
#include "internal/CoordinationForceImpl.h"
#include "internal/CoordinationExpression.h"
#include "internal/CoordinationSwitching.h"
#include "openmm/common/ExpressionUtilities.h"
#include "lepton/Operation.h"
#include "lepton/Parser.h"
#include "openmm/OpenMMException.h"
#include <cmath>
#include <set>
#include <sstream>
#include <vector>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

bool CudaCoordinationProgram::groupsOverlap(const CoordinationForce& force) {
    if (force.getMode() != CoordinationForce::TwoGroups)
        return false;
    set<int> a(force.getGroupA().begin(), force.getGroupA().end());
    for (int i : force.getGroupB())
        if (a.count(i) > 0)
            return true;
    return false;
}

/** The union of some sets of kernel files. */
static set<string> join(initializer_list<set<string> > sets) {
    set<string> result;
    for (const set<string>& files : sets)
        result.insert(files.begin(), files.end());
    return result;
}

/** The kernel files of every kernel that computes a CV from pairs: switching, geometry, the CV's sums. */
static const set<string> pairKernelFiles = {"switching", "launch", "geometry", "energy", "sums"};
/** The kernel files that the kernels on cell lists add: the grid and its traversal. */
static const set<string> cellFiles = {"cellgrid", "traversal"};
/** The kernel files of the cell kernels, with forces and without (COMPILE_CELLS, COMPILE_CELL_VALUES pick one). */
static const set<string> cellKernelFiles = join({pairKernelFiles, cellFiles, {"batches", "cellcoordination"}});

/**
 * Each family of kernels: its bit, its kernels, the kernel files it needs, and the define that
 * picks its kernel where it shares a file with another family (else NULL).
 */
static const struct {
    int bit;
    vector<string> names;
    set<string> files;
    const char* define;
} families[] = {
    {CudaCoordinationProgram::CoreKernels, {"applyGradient", "invertAtomIndex", "updateGroupAtoms", "checkPositions"},
            {"launch", "energy", "core"}, NULL},
    {CudaCoordinationProgram::TileKernels, {"computeCoordinationTiles"}, join({pairKernelFiles, {"batches", "tiles"}}), NULL},
    {CudaCoordinationProgram::PairKernels, {"computeCoordinationPairs"}, join({pairKernelFiles, {"pairlist"}}), NULL},
    {CudaCoordinationProgram::CellKernels, {"computeCoordinationCells"}, cellKernelFiles, "COMPILE_CELLS"},
    {CudaCoordinationProgram::BinningKernels, {"assignCells", "scanCellBlocks", "addCellOffsets", "scatterCells"},
            {"launch", "geometry", "cellgrid", "binning"}, NULL},
    {CudaCoordinationProgram::ListKernels, {"checkNeighborList", "computeCoordinationList"},
            join({pairKernelFiles, cellFiles, {"batches", "neighbors"}}), NULL},
    {CudaCoordinationProgram::HistogramKernels, {"histogramTiles", "histogramPairs"}, {"geometry", "histogram", "tilehistogram"}, NULL},
    {CudaCoordinationProgram::HistogramCellKernels, {"histogramCells"}, join({cellFiles, {"geometry", "histogram", "cellhistogram"}}),
            NULL},
    {CudaCoordinationProgram::CellValueKernels, {"computeCoordinationCellValues"}, cellKernelFiles, "COMPILE_CELL_VALUES"},
    {CudaCoordinationProgram::ParticleKernels, {"computeParticleNumbers", "evaluateParticleFunction", "computeParticleGradient"},
            join({pairKernelFiles, {"particles", "particlefunction"}}), NULL},
    {CudaCoordinationProgram::ParticleListKernels, {"computeParticleListNumbers", "computeParticleListGradient"},
            join({pairKernelFiles, cellFiles, {"batches", "neighbors", "particlefunction", "particlelists"}}), NULL},
    {CudaCoordinationProgram::ParticleHomeKernels, {"computeParticleHomeNumbers", "evaluateParticleTerms", "computeParticleHomeGradient"},
            join({cellKernelFiles, {"particlefunction", "particlehomes"}}), NULL}
};

string CudaCoordinationProgram::getSource(const vector<pair<string, string> >& files, const set<string>& names) {
    string source;
    int found = 0;
    for (auto& file : files)
        if (names.count(file.first) > 0) {
            source += file.second;
            found++;
        }
    if (found != names.size())
        throw OpenMMException("CudaCoordinationProgram: a kernel file is not in the list of platforms/cuda/CMakeLists.txt");
    return source;
}

vector<string> CudaCoordinationProgram::getKernelNames(int kernels) {
    vector<string> names;
    for (auto& family : families)
        if (kernels & family.bit)
            names.insert(names.end(), family.names.begin(), family.names.end());
    return names;
}

map<string, string> CudaCoordinationProgram::getDefines(int kernels) const {
    map<string, string> result = defines;
    for (auto& family : families)
        if ((kernels & family.bit) && family.define != NULL)
            result[family.define] = "";
    return result;
}

CudaCoordinationModulePart CudaCoordinationProgram::getPart(int kernels) const {
    set<string> names;
    for (auto& family : families)
        if (kernels & family.bit)
            names.insert(family.files.begin(), family.files.end());
    return {getSource(files, names), getDefines(kernels), getKernelNames(kernels)};
}

CudaCoordinationModulePart CudaCoordinationProgram::getChainRulePart(ComputeContext& cc, const Lepton::ParsedExpression& energy,
        const vector<string>& cvNames, const vector<string>& globalNames, const vector<const TabulatedFunction*>& tables,
        const vector<string>& tableNames) {
    CudaCoordinationModulePart part;
    // In double precision the tables' coefficients are double (CoordinationSpline::computeDoubleCoefficients()).
    string coefficientType = (cc.getUseDoublePrecision() ? "double4" : "float4");
    string tableParameters, tableArguments;
    vector<pair<string, string> > functionNames;
    for (int i = 0; i < tables.size(); i++) {
        string name = "table"+cc.intToString(i);
        functionNames.push_back(make_pair(tableNames[i], name));
        tableParameters += ", const "+coefficientType+"* RESTRICT "+name;
        tableArguments += ", "+name;
    }
    map<string, string> variables;
    map<string, Lepton::ParsedExpression> terms = {{"E = ", energy}};
    for (int k = 0; k < cvNames.size(); k++) {
        variables[cvNames[k]] = "cv["+cc.intToString(k)+"]";
        terms["dEdcv["+cc.intToString(k)+"] = "] = CoordinationExpression::optimize(energy.differentiate(cvNames[k]),
                "energy expression: its derivative by "+cvNames[k]);
    }
    for (int i = 0; i < globalNames.size(); i++)
        variables[globalNames[i]] = "globals["+cc.intToString(i)+"]";
    string code = cc.getExpressionUtilities().createExpressions(terms, variables, tables, functionNames, "energy", "double");
    if (cc.getUseDoublePrecision()) {
        // ExpressionUtilities loads a table's coefficients into float4 variables: double4 here.
        for (const string& declaration : {string("float4 coeff "), string("float4 c[")})
            for (size_t at = code.find(declaration); at != string::npos; at = code.find(declaration, at))
                code.replace(at, 6, "double4");
    }
    part.source = cc.replaceStrings(getSource(CudaCoordinationKernelSources::files, {"chainrule"}), {{"COMPUTE_ENERGY_EXPRESSION", code}});
    part.defines["NUM_CVS"] = cc.intToString(cvNames.size());
    part.defines["PADDED_NUM_ATOMS"] = cc.intToString(cc.getPaddedNumAtoms());
    part.defines["ENERGY_TABLE_PARAMETERS"] = tableParameters;
    part.defines["ENERGY_TABLE_ARGUMENTS"] = tableArguments;
    part.kernels = {"applyChainRule"};
    return part;
}

CudaCoordinationModulePart CudaCoordinationProgram::getStandaloneChainRulePart(const CudaCoordinationModulePart& chainRule) {
    CudaCoordinationModulePart part = chainRule;
    part.source = getSource(CudaCoordinationKernelSources::files, {"launch", "energy"})+chainRule.source;
    return part;
}

CudaCoordinationModulePart CudaCoordinationProgram::getChainedPart(const CudaCoordinationModulePart& cvPart,
        const CudaCoordinationModulePart& chainRule, int family) {
    CudaCoordinationModulePart part = cvPart;
    part.source += chainRule.source+getSource(CudaCoordinationKernelSources::files, family == ParticleListKernels ?
            set<string>({"chainedparticles"}) : family == ListKernels ? set<string>({"chainedblock", "chainedlists"}) :
            set<string>({"chainedblock", "chained"}));
    for (auto& define : chainRule.defines)
        part.defines[define.first] = define.second;
    part.kernels.insert(part.kernels.end(), chainRule.kernels.begin(), chainRule.kernels.end());
    part.kernels.push_back(getChainedKernelName(family));
    if (family == TileKernels)
        part.defines["MAX_CHAINED_TILE_CVS"] = to_string(MaxChainedTileCVs);
    return part;
}

string CudaCoordinationProgram::getChainedKernelName(int family) {
    return (family == ParticleListKernels ? "computeParticleListGradientChained" : family == ListKernels ?
            "computeCoordinationListChained" : "computeCoordinationTilesChained");
}

string CudaCoordinationProgram::getBondedChainRuleSource() {
    return "namespace CoordinationBondedChainRule {\n"+getSource(CudaCoordinationKernelSources::files, {"energy", "bondedchainrule"})+
            "}\n#undef GRADIENT_FIXED_POINT_UNIT\n";
}

CudaCoordinationModulePart CudaCoordinationProgram::getSplinePart() {
    CudaCoordinationModulePart part;
    part.source = getSource(CudaCoordinationKernelSources::files, {"spline"});
    part.kernels = {"fitSplineLines", "fitSplineCoefficients1D", "fitSplineCoefficients2D", "fitSplineCoefficients3D"};
    part.defines["CELLS_3D"] = to_string(SplineCells3D);
    return part;
}

int CudaCoordinationProgram::addPart(vector<CudaCoordinationModulePart>& parts, const CudaCoordinationModulePart& part) {
    for (int i = 0; i < parts.size(); i++)
        if (parts[i].source == part.source && parts[i].defines == part.defines && parts[i].kernels == part.kernels)
            return i;
    parts.push_back(part);
    return parts.size()-1;
}

string CudaCoordinationProgram::getKernelName(const string& kernel, int part) {
    return kernel+"_"+to_string(part);
}

string CudaCoordinationProgram::assemble(const vector<CudaCoordinationModulePart>& parts, ComputeContext& cc) {
    stringstream module;
    for (int i = 0; i < parts.size(); i++) {
        const CudaCoordinationModulePart& part = parts[i];
        map<string, string> names;
        for (const string& kernel : part.kernels)
            names[kernel] = getKernelName(kernel, i);
        set<string> macros;
        for (auto& define : part.defines) {
            module << "#define " << define.first << (define.second.empty() ? "" : " "+define.second) << "\n";
            macros.insert(define.first);
        }
        string source = cc.replaceStrings(part.source, names);
        stringstream lines(source);
        string line, word, name;
        while (getline(lines, line)) {
            stringstream words(line);
            if (words >> word && word == "#define" && words >> name)
                macros.insert(name.substr(0, name.find('(')));
        }
        module << "namespace coordinationPart" << i << " {\n" << source << "\n} // namespace coordinationPart" << i << "\n";
        for (const string& macro : macros)
            module << "#undef " << macro << "\n";
    }
    return module.str();
}

int CudaCoordinationProgram::chooseLPerThread(const CoordinationForce& force) {
    double nA = force.getGroupA().size(), nB = force.getGroupB().size();
    double pairs = (force.getMode() == CoordinationForce::OneGroup ? 0.5*nA*nA : nA*nB);
    return (pairs >= (1 << 22) ? 2 : 1);
}

CudaCoordinationProgram::CudaCoordinationProgram(const CoordinationForce& force, ComputeContext& cc, int lPerThread, int listLanes,
        int sBatch, int listSide) {
    if (sBatch != 16 && sBatch != 32)
        throw OpenMMException("CudaCoordinationProgram: sBatch must be 16 or 32, not "+cc.intToString(sBatch));
    if (listSide < -1 || listSide > 1 || (listSide >= 0 && (force.getMode() != CoordinationForce::TwoGroups || force.usesParticleFunction())))
        throw OpenMMException("CudaCoordinationProgram: listSide must be -1, or 0 or 1 for two groups without a particle function, not "+
                cc.intToString(listSide));
    defineConfiguration(force, cc, lPerThread, listLanes, sBatch, listSide);
    map<string, string> replacements;
    replacements["CUSTOM_SWITCH"] = customSwitchCode(force, cc);
    for (auto& file : CudaCoordinationKernelSources::files)
        files.push_back(make_pair(file.first, cc.replaceStrings(file.second, replacements)));
}

void CudaCoordinationProgram::defineConfiguration(const CoordinationForce& force, ComputeContext& cc, int lPerThread, int listLanes,
        int sBatch, int listSide) {
    CoordinationForce::SwitchingFunction type = force.getSwitchingFunction();
    int n = force.getN(), m = (force.getM() == 0 ? 2*force.getN() : force.getM());
    bool finiteDMax = isfinite(force.getDMax());
    defines["TILE"] = cc.intToString(TileSize);
    // Two L particles a lane in the cell coordination kernel: fewer shared loads and shuffles a
    // pair (5 to 7% faster for 100,000 and 1,000,000 particles in single and mixed precision), but
    // in double precision the registers halve the warps that fit (11 to 24% slower there).
    if (!cc.getUseDoublePrecision())
        defines["CELL_HALF_BATCHES"] = "";
    defines["L_PER_THREAD"] = cc.intToString(lPerThread);
    defines["LIST_LANES"] = cc.intToString(listLanes);
    if (listSide >= 0)
        defines["LIST_ONE_SIDED"] = cc.intToString(listSide);
    defines["S_BATCH"] = cc.intToString(sBatch);
    defines["PADDED_NUM_ATOMS"] = cc.intToString(cc.getPaddedNumAtoms());
    defines["SWITCH_TYPE"] = cc.intToString(type);
    if (type == CoordinationForce::Rational) {
        defines["RATIONAL_N"] = cc.intToString(n);
        defines["RATIONAL_M"] = cc.intToString(m);
        defines["RATIONAL_WINDOW"] = cc.doubleToString(CoordinationSwitching::RationalWindow);
        if (m == 2*n)
            defines["RATIONAL_SIMPLE"] = "";
        if (n%2 == 0 && m%2 == 0 && force.getD0() == 0.0)
            defines["USE_R2_ONLY"] = "";
    }
    if (finiteDMax)
        defines["HAS_DMAX"] = "";
    if (finiteDMax && force.getStretch())
        defines["STRETCH"] = "";
    if (force.usesPeriodicBoundaryConditions()) {
        defines["PERIODIC"] = "";
        if (cc.getBoxIsTriclinic())
            defines["TRICLINIC"] = "";
    }
    if (force.getMode() == CoordinationForce::OneGroup)
        defines["ONE_GROUP"] = "";
    if (groupsOverlap(force))
        defines["GROUPS_OVERLAP"] = "";
    if (force.getMode() == CoordinationForce::PairList && force.getUsesPairParameters())
        defines["PAIR_PARAMETERS"] = "";
    // Per-atom terms s(r) r^k with k != 0 (particleTerm() in kernels/switching.cu); a new k of
    // updateParametersInContext() that turns it on or off makes a new program.
    if (force.usesParticleFunction() && force.getDistancePower() != 0.0)
        defines["PARTICLE_DISTANCE_POWER"] = "";
    // The threshold of MoreThan and LessThan (kernels/particles.cu) is Rational whatever s(r) is.
    defines["PARTICLE_RATIONAL_WINDOW"] = cc.doubleToString(CoordinationSwitching::RationalWindow);
    defines["PARTICLE_FUNCTION_THREADS"] = cc.intToString(ParticleFunctionThreads);
    defines["LIST_BLOCK_SIZE"] = cc.intToString(ListBlockSize);
    defines["PARTICLE_LIST_MIN_BLOCKS"] = (cc.getUseDoublePrecision() ? "2" : "4");
}

string CudaCoordinationProgram::customSwitchCode(const CoordinationForce& force, ComputeContext& cc) {
    if (force.getSwitchingFunction() != CoordinationForce::Custom)
        return "";
    string description = "CoordinationForce: custom expression \""+force.getCustomExpression()+"\"";
    Lepton::ParsedExpression s = CoordinationExpression::optimize(Lepton::Parser::parse(force.getCustomExpression()), description);
    map<string, Lepton::ParsedExpression> code = {{"s = ", s},
            {"dsdxValue = ", CoordinationExpression::optimize(s.differentiate("x"), description+": its derivative by x")}};
    map<string, string> variables = {{"x", "x"}};
    return cc.getExpressionUtilities().createExpressions(code, variables, vector<const TabulatedFunction*>(),
            vector<pair<string, string> >(), "custom");
}
