// cosictl entry point (bundled into out/cosictl.cjs and the out/cosictl executable).
import { main } from './main.ts';

main();
