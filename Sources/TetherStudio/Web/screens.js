// Loaded last: every screen has registered itself, so the socket may open.
"use strict";
showScreen();
connectSocket();
