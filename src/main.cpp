#include "app/app.h"

int main(int argc, char** argv) { return leasehold::app::Main(argc, argv); }
