# Owned by the deployment work (issue 7): dlprofctl.
