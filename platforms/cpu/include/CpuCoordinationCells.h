#ifndef CPU_COORDINATION_CELLS_H_
#define CPU_COORDINATION_CELLS_H_

#include "openmm/Vec3.h"
#include <vector>

namespace CoordinationPlugin {

/**
 * Points sorted into cells half a cutoff wide (narrower in a box too small for that), for the CPU
 * kernels: every pair of points closer than the cutoff (nearest image when periodic) lies in cells
 * at most getReach() cells apart along each axis (cells half a cutoff wide visit about a third of
 * the volume that cells a cutoff wide and one apart do). Periodic cells divide
 * the box along its reduced (triclinic) axes; without a box they cover the points' bounding box,
 * and a point outside it counts as in the nearest cell.
 */
class CpuCoordinationCells {
public:
    /**
     * Sort points into cells.
     *
     * @param points  the positions (nm)
     * @param cutoff  the smallest width of a cell (nm), finite and positive
     * @param box     the periodic box vectors in OpenMM's reduced form, or NULL
     * @return false where a periodic box is narrower than 2.25 cutoffs along some axis (then a
     *         pair could meet in two cells, or in more than one image): use no cells
     */
    bool build(const std::vector<OpenMM::Vec3>& points, double cutoff, const OpenMM::Vec3* box);
    /** The number of cells. */
    int getNumCells() const {
        return (int) begin.size()-1;
    }
    /**
     * The cell of a point, and in image the point moved into the box by whole box vectors (the
     * point itself without a box).
     */
    int locate(const OpenMM::Vec3& point, OpenMM::Vec3& image) const;
    /** The points of cell c are order[k] for begin[c] <= k < begin[c+1]; images[k] are their images. */
    const std::vector<int>& getBegin() const {
        return begin;
    }
    /** The indices of the points, cell after cell. */
    const std::vector<int>& getOrder() const {
        return order;
    }
    /** The points' images in the box, in the order of getOrder(). */
    const std::vector<OpenMM::Vec3>& getImages() const {
        return images;
    }
    /** How many cells apart along an axis two points closer than the cutoff can be (2 to MaxReach). */
    int getReach() const {
        return reach;
    }
    /** The largest reach: cells a quarter of a cutoff wide, in a box at least 2.25 cutoffs wide. */
    static const int MaxReach = 4;
    /**
     * Call f(neighbor, shift) for the cells within getReach() of cell c along each axis, shift
     * being what to add to the image of a point of the neighbor to get its image next to c. half:
     * only those that come after c in a fixed order (so that each pair of cells is met once),
     * without c; otherwise all of them with c.
     */
    template <class F>
    void forEachNeighbor(int c, bool half, F f) const {
        int index[3] = {c%size[0], (c/size[0])%size[1], c/(size[0]*size[1])};
        for (int o2 = -reach; o2 <= reach; o2++)
            for (int o1 = -reach; o1 <= reach; o1++)
                for (int o0 = -reach; o0 <= reach; o0++) {
                    if (half && !(o2 > 0 || (o2 == 0 && (o1 > 0 || (o1 == 0 && o0 > 0)))))
                        continue;
                    int offset[3] = {o0, o1, o2}, neighbor[3];
                    OpenMM::Vec3 shift;
                    bool inside = true;
                    for (int k = 0; k < 3; k++) {
                        neighbor[k] = index[k]+offset[k];
                        if (neighbor[k] < 0 || neighbor[k] >= size[k]) {
                            if (!periodic)
                                inside = false;
                            else if (neighbor[k] < 0) {
                                neighbor[k] += size[k];
                                shift -= box[k];
                            }
                            else {
                                neighbor[k] -= size[k];
                                shift += box[k];
                            }
                        }
                    }
                    if (inside)
                        f((neighbor[2]*size[1]+neighbor[1])*size[0]+neighbor[0], shift);
                }
    }
private:
    bool periodic;
    int size[3], reach;
    OpenMM::Vec3 box[3], origin, width;
    std::vector<int> begin, order, cellOfPoint;
    std::vector<OpenMM::Vec3> images, pointImages;
};

} // namespace CoordinationPlugin

#endif /*CPU_COORDINATION_CELLS_H_*/
