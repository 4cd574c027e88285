"""torchvision checkpoints as data: builder -> (enum name, DEFAULT member, members).

Each member: (name, file under https://download.pytorch.org/models/, num_params, min_size, crop size,
resize size, interpolation) - the ImageNet-1k classification weights of torchvision 0.29 (incl. SWAG).
"""

TV_URL = "https://download.pytorch.org/models/"

TV_WEIGHTS = {
    "resnet18": ("ResNet18_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "resnet18-f37072fd.pth", 11689512, (1, 1), 224, 256, "bilinear"),
    ]),
    "resnet34": ("ResNet34_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "resnet34-b627a593.pth", 21797672, (1, 1), 224, 256, "bilinear"),
    ]),
    "resnet50": ("ResNet50_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnet50-0676ba61.pth", 25557032, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "resnet50-11ad3fa6.pth", 25557032, (1, 1), 224, 232, "bilinear"),
    ]),
    "resnet101": ("ResNet101_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnet101-63fe2227.pth", 44549160, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "resnet101-cd907fc2.pth", 44549160, (1, 1), 224, 232, "bilinear"),
    ]),
    "resnet152": ("ResNet152_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnet152-394f9c45.pth", 60192808, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "resnet152-f82ba261.pth", 60192808, (1, 1), 224, 232, "bilinear"),
    ]),
    "resnext50_32x4d": ("ResNeXt50_32X4D_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnext50_32x4d-7cdf4587.pth", 25028904, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "resnext50_32x4d-1a0047aa.pth", 25028904, (1, 1), 224, 232, "bilinear"),
    ]),
    "resnext101_32x8d": ("ResNeXt101_32X8D_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "resnext101_32x8d-8ba56ff5.pth", 88791336, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "resnext101_32x8d-110c445d.pth", 88791336, (1, 1), 224, 232, "bilinear"),
    ]),
    "resnext101_64x4d": ("ResNeXt101_64X4D_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "resnext101_64x4d-173b62eb.pth", 83455272, (1, 1), 224, 232, "bilinear"),
    ]),
    "wide_resnet50_2": ("Wide_ResNet50_2_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "wide_resnet50_2-95faca4d.pth", 68883240, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "wide_resnet50_2-9ba9bcbe.pth", 68883240, (1, 1), 224, 232, "bilinear"),
    ]),
    "wide_resnet101_2": ("Wide_ResNet101_2_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "wide_resnet101_2-32ee1156.pth", 126886696, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "wide_resnet101_2-d733dc28.pth", 126886696, (1, 1), 224, 232, "bilinear"),
    ]),
    "vgg11": ("VGG11_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg11-8a719046.pth", 132863336, (32, 32), 224, 256, "bilinear"),
    ]),
    "vgg11_bn": ("VGG11_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg11_bn-6002323d.pth", 132868840, (32, 32), 224, 256, "bilinear"),
    ]),
    "vgg13": ("VGG13_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg13-19584684.pth", 133047848, (32, 32), 224, 256, "bilinear"),
    ]),
    "vgg13_bn": ("VGG13_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg13_bn-abd245e5.pth", 133053736, (32, 32), 224, 256, "bilinear"),
    ]),
    "vgg16": ("VGG16_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg16-397923af.pth", 138357544, (32, 32), 224, 256, "bilinear"),
    ]),
    "vgg16_bn": ("VGG16_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg16_bn-6c64b313.pth", 138365992, (32, 32), 224, 256, "bilinear"),
    ]),
    "vgg19": ("VGG19_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg19-dcbb9e9d.pth", 143667240, (32, 32), 224, 256, "bilinear"),
    ]),
    "vgg19_bn": ("VGG19_BN_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vgg19_bn-c79401a0.pth", 143678248, (32, 32), 224, 256, "bilinear"),
    ]),
    "densenet121": ("DenseNet121_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet121-a639ec97.pth", 7978856, (29, 29), 224, 256, "bilinear"),
    ]),
    "densenet161": ("DenseNet161_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet161-8d451a50.pth", 28681000, (29, 29), 224, 256, "bilinear"),
    ]),
    "densenet169": ("DenseNet169_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet169-b2777c0a.pth", 14149480, (29, 29), 224, 256, "bilinear"),
    ]),
    "densenet201": ("DenseNet201_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "densenet201-c1103571.pth", 20013928, (29, 29), 224, 256, "bilinear"),
    ]),
    "mobilenet_v2": ("MobileNet_V2_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "mobilenet_v2-b0353104.pth", 3504872, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "mobilenet_v2-7ebf99e0.pth", 3504872, (1, 1), 224, 232, "bilinear"),
    ]),
    "mobilenet_v3_large": ("MobileNet_V3_Large_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "mobilenet_v3_large-8738ca79.pth", 5483032, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "mobilenet_v3_large-5c1a4163.pth", 5483032, (1, 1), 224, 232, "bilinear"),
    ]),
    "mobilenet_v3_small": ("MobileNet_V3_Small_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "mobilenet_v3_small-047dcff4.pth", 2542856, (1, 1), 224, 256, "bilinear"),
    ]),
    "vit_b_16": ("ViT_B_16_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_b_16-c867db91.pth", 86567656, (224, 224), 224, 256, "bilinear"),
        ("IMAGENET1K_SWAG_E2E_V1", "vit_b_16_swag-9ac1b537.pth", 86859496, (384, 384), 384, 384, "bicubic"),
        ("IMAGENET1K_SWAG_LINEAR_V1", "vit_b_16_lc_swag-4e70ced5.pth", 86567656, (224, 224), 224, 224, "bicubic"),
    ]),
    "vit_b_32": ("ViT_B_32_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_b_32-d86f8d99.pth", 88224232, (224, 224), 224, 256, "bilinear"),
    ]),
    "vit_l_16": ("ViT_L_16_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_l_16-852ce7e3.pth", 304326632, (224, 224), 224, 242, "bilinear"),
        ("IMAGENET1K_SWAG_E2E_V1", "vit_l_16_swag-4f3808c9.pth", 305174504, (512, 512), 512, 512, "bicubic"),
        ("IMAGENET1K_SWAG_LINEAR_V1", "vit_l_16_lc_swag-4d563306.pth", 304326632, (224, 224), 224, 224, "bicubic"),
    ]),
    "vit_l_32": ("ViT_L_32_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "vit_l_32-c7638314.pth", 306535400, (224, 224), 224, 256, "bilinear"),
    ]),
    "vit_h_14": ("ViT_H_14_Weights", "IMAGENET1K_SWAG_E2E_V1", [
        ("IMAGENET1K_SWAG_E2E_V1", "vit_h_14_swag-80465313.pth", 633470440, (518, 518), 518, 518, "bicubic"),
        ("IMAGENET1K_SWAG_LINEAR_V1", "vit_h_14_lc_swag-c1eb923e.pth", 632045800, (224, 224), 224, 224, "bicubic"),
    ]),
    "swin_t": ("Swin_T_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_t-704ceda3.pth", 28288354, (224, 224), 224, 232, "bicubic"),
    ]),
    "swin_s": ("Swin_S_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_s-5e29d889.pth", 49606258, (224, 224), 224, 246, "bicubic"),
    ]),
    "swin_b": ("Swin_B_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "swin_b-68c6b09e.pth", 87768224, (224, 224), 224, 238, "bicubic"),
    ]),
    "convnext_tiny": ("ConvNeXt_Tiny_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_tiny-983f1562.pth", 28589128, (32, 32), 224, 236, "bilinear"),
    ]),
    "convnext_small": ("ConvNeXt_Small_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_small-0c510722.pth", 50223688, (32, 32), 224, 230, "bilinear"),
    ]),
    "convnext_base": ("ConvNeXt_Base_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_base-6075fbad.pth", 88591464, (32, 32), 224, 232, "bilinear"),
    ]),
    "convnext_large": ("ConvNeXt_Large_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "convnext_large-ea097f82.pth", 197767336, (32, 32), 224, 232, "bilinear"),
    ]),
    "efficientnet_b0": ("EfficientNet_B0_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b0_rwightman-7f5810bc.pth", 5288548, (1, 1), 224, 256, "bicubic"),
    ]),
    "efficientnet_b1": ("EfficientNet_B1_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "efficientnet_b1_rwightman-bac287d4.pth", 7794184, (1, 1), 240, 256, "bicubic"),
        ("IMAGENET1K_V2", "efficientnet_b1-c27df63c.pth", 7794184, (1, 1), 240, 255, "bilinear"),
    ]),
    "efficientnet_b2": ("EfficientNet_B2_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b2_rwightman-c35c1473.pth", 9109994, (1, 1), 288, 288, "bicubic"),
    ]),
    "efficientnet_b3": ("EfficientNet_B3_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b3_rwightman-b3899882.pth", 12233232, (1, 1), 300, 320, "bicubic"),
    ]),
    "efficientnet_b4": ("EfficientNet_B4_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b4_rwightman-23ab8bcd.pth", 19341616, (1, 1), 380, 384, "bicubic"),
    ]),
    "efficientnet_b5": ("EfficientNet_B5_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b5_lukemelas-1a07897c.pth", 30389784, (1, 1), 456, 456, "bicubic"),
    ]),
    "efficientnet_b6": ("EfficientNet_B6_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b6_lukemelas-24a108a5.pth", 43040704, (1, 1), 528, 528, "bicubic"),
    ]),
    "efficientnet_b7": ("EfficientNet_B7_Weights", "IMAGENET1K_V1", [
        ("IMAGENET1K_V1", "efficientnet_b7_lukemelas-c5b4e57e.pth", 66347960, (1, 1), 600, 600, "bicubic"),
    ]),
    "regnet_y_400mf": ("RegNet_Y_400MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_400mf-c65dace8.pth", 4344144, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_y_400mf-e6988f5f.pth", 4344144, (1, 1), 224, 232, "bilinear"),
    ]),
    "regnet_y_800mf": ("RegNet_Y_800MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_800mf-1b27b58c.pth", 6432512, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_y_800mf-58fc7688.pth", 6432512, (1, 1), 224, 232, "bilinear"),
    ]),
    "regnet_y_1_6gf": ("RegNet_Y_1_6GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_1_6gf-b11a554e.pth", 11202430, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_y_1_6gf-0d7bc02a.pth", 11202430, (1, 1), 224, 232, "bilinear"),
    ]),
    "regnet_y_3_2gf": ("RegNet_Y_3_2GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_3_2gf-b5a9779c.pth", 19436338, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_y_3_2gf-9180c971.pth", 19436338, (1, 1), 224, 232, "bilinear"),
    ]),
    "regnet_y_8gf": ("RegNet_Y_8GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_8gf-d0d0e4a8.pth", 39381472, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_y_8gf-dc2b1b54.pth", 39381472, (1, 1), 224, 232, "bilinear"),
    ]),
    "regnet_y_16gf": ("RegNet_Y_16GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_16gf-9e6ed7dd.pth", 83590140, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_y_16gf-3e4a00f9.pth", 83590140, (1, 1), 224, 232, "bilinear"),
        ("IMAGENET1K_SWAG_E2E_V1", "regnet_y_16gf_swag-43afe44d.pth", 83590140, (1, 1), 384, 384, "bicubic"),
        ("IMAGENET1K_SWAG_LINEAR_V1", "regnet_y_16gf_lc_swag-f3ec0043.pth", 83590140, (1, 1), 224, 224, "bicubic"),
    ]),
    "regnet_y_32gf": ("RegNet_Y_32GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_y_32gf-4dee3f7a.pth", 145046770, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_y_32gf-8db6d4b5.pth", 145046770, (1, 1), 224, 232, "bilinear"),
        ("IMAGENET1K_SWAG_E2E_V1", "regnet_y_32gf_swag-04fdfa75.pth", 145046770, (1, 1), 384, 384, "bicubic"),
        ("IMAGENET1K_SWAG_LINEAR_V1", "regnet_y_32gf_lc_swag-e1583746.pth", 145046770, (1, 1), 224, 224, "bicubic"),
    ]),
    "regnet_x_400mf": ("RegNet_X_400MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_400mf-adf1edd5.pth", 5495976, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_x_400mf-62229a5f.pth", 5495976, (1, 1), 224, 232, "bilinear"),
    ]),
    "regnet_x_800mf": ("RegNet_X_800MF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_800mf-ad17e45c.pth", 7259656, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_x_800mf-94a99ebd.pth", 7259656, (1, 1), 224, 232, "bilinear"),
    ]),
    "regnet_x_1_6gf": ("RegNet_X_1_6GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_1_6gf-e3633e7f.pth", 9190136, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_x_1_6gf-a12f2b72.pth", 9190136, (1, 1), 224, 232, "bilinear"),
    ]),
    "regnet_x_3_2gf": ("RegNet_X_3_2GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_3_2gf-f342aeae.pth", 15296552, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_x_3_2gf-7071aa85.pth", 15296552, (1, 1), 224, 232, "bilinear"),
    ]),
    "regnet_x_8gf": ("RegNet_X_8GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_8gf-03ceed89.pth", 39572648, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_x_8gf-2b70d774.pth", 39572648, (1, 1), 224, 232, "bilinear"),
    ]),
    "regnet_x_16gf": ("RegNet_X_16GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_16gf-2007eb11.pth", 54278536, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_x_16gf-ba3796d7.pth", 54278536, (1, 1), 224, 232, "bilinear"),
    ]),
    "regnet_x_32gf": ("RegNet_X_32GF_Weights", "IMAGENET1K_V2", [
        ("IMAGENET1K_V1", "regnet_x_32gf-9d47f8d0.pth", 107811560, (1, 1), 224, 256, "bilinear"),
        ("IMAGENET1K_V2", "regnet_x_32gf-6eb8fdc6.pth", 107811560, (1, 1), 224, 232, "bilinear"),
    ]),
}
