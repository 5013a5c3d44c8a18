// What the frames of a stack are, so that a tool keeps its input's axes:
// a movie's frames are time points (ImageJ "frames", T), a focus series'
// are planes (ImageJ "slices", Z), and a tool's result pages (SOFI orders,
// a mean image) are plain labelled pages (ImageJ "images" only).
#pragma once

namespace nanoscopy {

enum class StackAxis { time, z, pages };

}  // namespace nanoscopy
