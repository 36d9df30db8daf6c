"""The importance recalibration job."""
