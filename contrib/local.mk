# Owned by the deployment work (issue 7): sources, data and tests of contrib/.
