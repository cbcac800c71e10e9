#include "CpuCoordinationCells.h"
#include <algorithm>
#include <cmath>

using namespace CoordinationPlugin;
using namespace OpenMM;
using namespace std;

bool CpuCoordinationCells::build(const vector<Vec3>& points, double cutoff, const Vec3* boxVectors) {
    periodic = (boxVectors != NULL);
    // At most about four cells a point (and at least 27): more would cost more to visit than they save.
    double maxCells = max(27.0, 4.0*points.size());
    if (periodic) {
        for (int k = 0; k < 3; k++)
            box[k] = boxVectors[k];
        double volume = box[0][0]*box[1][1]*box[2][2];
        Vec3 bc = box[1].cross(box[2]), ca = box[2].cross(box[0]);
        double widths[3] = {volume/sqrt(bc.dot(bc)), volume/sqrt(ca.dot(ca)), box[2][2]};
        // Cells 1/reach of a cutoff wide, at least 2*reach+1 along each axis: a cell and the reach
        // cells on each side hold every point within the cutoff of it, each cell once and in one
        // image. Half a cutoff where the box allows it (at least 2.5 cutoffs wide), down to a quarter
        // (2.25 cutoffs).
        double minWidth = min(widths[0], min(widths[1], widths[2]));
        for (reach = 2; reach <= MaxReach && minWidth < (2.0+1.0/reach)*cutoff; reach++)
            ;
        if (reach > MaxReach)
            return false;
        int fewest = 2*reach+1;
        for (int k = 0; k < 3; k++) {
            size[k] = (int) min(floor(reach*widths[k]/cutoff), 1024.0);
            if (size[k] < fewest)
                return false;    // rounding at the edge of the condition above
        }
        while ((double) size[0]*size[1]*size[2] > maxCells && max(size[0], max(size[1], size[2])) > fewest) {
            int k = (int) (max_element(size, size+3)-size);
            size[k] = max(fewest, size[k]/2);
        }
    }
    else {
        Vec3 low = points.empty() ? Vec3() : points[0], high = low;
        for (const Vec3& p : points)
            for (int k = 0; k < 3; k++) {
                low[k] = min(low[k], p[k]);
                high[k] = max(high[k], p[k]);
            }
        int limit = max(1, (int) cbrt(maxCells));
        reach = 2;
        for (int k = 0; k < 3; k++) {
            double extent = high[k]-low[k];
            size[k] = max(1, (int) min((double) limit, floor(reach*extent/cutoff)));
            width[k] = (extent > 0 ? extent/size[k] : 1.0);
        }
        origin = low;
    }
    int numCells = size[0]*size[1]*size[2];
    cellOfPoint.resize(points.size());
    pointImages.resize(points.size());
    begin.assign(numCells+1, 0);
    for (int i = 0; i < points.size(); i++) {
        cellOfPoint[i] = locate(points[i], pointImages[i]);
        begin[cellOfPoint[i]+1]++;
    }
    for (int c = 0; c < numCells; c++)
        begin[c+1] += begin[c];
    vector<int> next(begin.begin(), begin.end()-1);
    order.resize(points.size());
    images.resize(points.size());
    for (int i = 0; i < points.size(); i++) {
        int k = next[cellOfPoint[i]]++;
        order[k] = i;
        images[k] = pointImages[i];
    }
    return true;
}

int CpuCoordinationCells::locate(const Vec3& point, Vec3& image) const {
    int index[3];
    if (periodic) {
        // Fractional coordinates along the reduced box vectors, brought into [0, 1).
        double s[3];
        s[2] = point[2]/box[2][2];
        s[1] = (point[1]-s[2]*box[2][1])/box[1][1];
        s[0] = (point[0]-s[1]*box[1][0]-s[2]*box[2][0])/box[0][0];
        image = point;
        for (int k = 0; k < 3; k++) {
            double whole = floor(s[k]);
            image -= box[k]*whole;
            s[k] -= whole;
            index[k] = (int) min(size[k]-1.0, max(0.0, s[k]*size[k]));
        }
    }
    else {
        image = point;
        for (int k = 0; k < 3; k++)
            index[k] = (int) min(size[k]-1.0, max(0.0, (point[k]-origin[k])/width[k]));
    }
    return (index[2]*size[1]+index[1])*size[0]+index[0];
}
