// Opens an image with ImageJ itself (Debian's imagej, ij.jar) as a user does, without a
// display, and prints what ImageJ sees: size, channels/slices/frames, pixel size
// and unit, and each slice label. Run as a single-file program:
//   java -Djava.awt.headless=true -cp /usr/share/java/ij.jar ImageJCheck.java FILE
import ij.IJ;
import ij.ImagePlus;
import ij.measure.Calibration;

public class ImageJCheck {
  public static void main(String[] args) {
    ImagePlus imp = IJ.openImage(args[0]);
    if (imp == null) { System.out.println("FAIL cannot open " + args[0]); System.exit(1); }
    Calibration c = imp.getCalibration();
    System.out.println("size " + imp.getWidth() + "x" + imp.getHeight() + " channels " + imp.getNChannels()
        + " slices " + imp.getNSlices() + " frames " + imp.getNFrames());
    System.out.println("pixel " + c.pixelWidth + " " + c.getUnit());
    for (int i = 1; i <= imp.getStackSize(); ++i) System.out.println("label " + i + " " + imp.getStack().getSliceLabel(i));
  }
}
