// The fit kernels of the astigmatic model (Astigmatic3d), float and double (fit_launch.cuh).
#include "fit/fit_kernel_templates.cuh"

namespace nanoscopy::cuda::fit_launch {

template void launch_model<Astigmatic3d, float>(const KernelArgs<float>&, const Astigmatic3d&, Estimator, bool, const FitGeometry&, int,
                                      cudaStream_t);
template void launch_model<Astigmatic3d, double>(const KernelArgs<double>&, const Astigmatic3d&, Estimator, bool, const FitGeometry&,
                                       int, cudaStream_t);
template void preload_model<Astigmatic3d, float>(Estimator);
template void preload_model<Astigmatic3d, double>(Estimator);

}  // namespace nanoscopy::cuda::fit_launch
