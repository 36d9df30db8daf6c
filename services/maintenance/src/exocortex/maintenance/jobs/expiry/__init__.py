"""The sentinel-report expiry job."""
